use super::scan::Scan;
use super::*;

#[test]
fn scanner_classifies_common_chunks() {
    let c = |s: &str, api| scan_event(s.as_bytes(), api);
    assert_eq!(
        c(
            r#"{"choices":[{"text":" Paris","index":0}]}"#,
            Api::Completions
        ),
        Scan {
            content: true,
            needs_parse: false
        }
    );
    assert_eq!(
        c(r#"{"choices":[{"text":"","index":0}]}"#, Api::Completions),
        Scan {
            content: false,
            needs_parse: false
        }
    );
    assert_eq!(
        c(
            r#"{"choices":[{"delta":{"role":"assistant","content":null}}]}"#,
            Api::Chat
        ),
        Scan {
            content: false,
            needs_parse: false
        }
    );
    assert_eq!(
        c(r#"{"choices":[{"delta": {"content": "hi"}}]}"#, Api::Chat),
        Scan {
            content: true,
            needs_parse: false
        }
    );
    assert!(
        c(
            r#"{"choices":[],"usage":{"completion_tokens":3}}"#,
            Api::Chat
        )
        .needs_parse
    );
    assert!(c(r#"{"error":{"message":"boom"}}"#, Api::Chat).needs_parse);
}

#[test]
fn usage_beats_event_count_and_done_is_required() {
    let mut s = StreamState::new(Api::Chat);
    s.event(
        Field::Data,
        br#"{"choices":[{"delta":{"role":"assistant","content":null}}]}"#,
        5,
    );
    s.event(
        Field::Data,
        br#"{"choices":[{"delta":{"content":"a"}}]}"#,
        100,
    );
    s.event(
        Field::Data,
        br#"{"choices":[{"delta":{"content":"bc"}}]}"#,
        150,
    );
    s.event(
        Field::Data,
        br#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
        160,
    );
    s.event(
        Field::Data,
        br#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}"#,
        170,
    );
    s.event(Field::Data, b"[DONE]", 171);
    let mut rec = RequestRecord::default();
    s.finish(&mut rec, 180, None, None);
    assert_eq!(rec.ttft_us, Some(100));
    assert_eq!(rec.itl_us, vec![50]);
    assert_eq!(
        (rec.output_tokens, rec.output_tokens_source),
        (Some(3), Some(TokenSource::Usage))
    );
    assert_eq!(rec.prompt_tokens, Some(7));
    assert_eq!(rec.error, None);

    let mut s = StreamState::new(Api::Completions);
    s.event(Field::Data, br#"{"choices":[{"text":"a"}]}"#, 10);
    let mut rec = RequestRecord::default();
    s.finish(&mut rec, 20, None, None);
    assert_eq!(rec.error.as_deref(), Some("stream ended without [DONE]"));
    assert_eq!(
        (rec.output_tokens, rec.output_tokens_source),
        (Some(1), Some(TokenSource::Events))
    );
}

#[test]
fn mid_stream_error_and_llama_timings() {
    let mut s = StreamState::new(Api::Completions);
    s.event(Field::Data, br#"{"choices":[{"text":"a"}]}"#, 30_000);
    s.event(
        Field::Data,
        br#"{"error":{"code":500,"message":"boom"}}"#,
        40_000,
    );
    let mut rec = RequestRecord::default();
    s.finish(&mut rec, 41_000, None, None);
    assert_eq!(
        rec.error.as_deref(),
        Some("server error mid-stream: boom (500)")
    );

    let mut s = StreamState::new(Api::Completions);
    s.event(Field::Data, br#"{"choices":[{"text":"a"}]}"#, 30_000);
    s.event(Field::Data, br#"{"choices":[{"text":"","finish_reason":"length"}],"usage":{"completion_tokens":1},"timings":{"prompt_ms":12.5}}"#, 31_000);
    s.event(Field::Data, b"[DONE]", 31_100);
    let mut rec = RequestRecord::default();
    s.finish(&mut rec, 31_200, None, None);
    assert_eq!(rec.server_queue_us, Some(17_500));
}

#[test]
fn a_server_queue_figure_that_cannot_be_true_is_null_not_zero() {
    use super::server_queue_us as q;
    assert_eq!(q(Some(2.0), None, Some(30_000)), Some(2_000));
    assert_eq!(q(None, Some(12.5), Some(30_000)), Some(17_500));
    // Not a number, negative, past the first token or the 7-day bound: not believed.
    for tgi in [f64::NAN, f64::INFINITY, -5.0, 1e300, 31.5] {
        assert_eq!(q(Some(tgi), None, Some(30_000)), None, "{tgi}");
    }
    assert_eq!(q(Some(1e300), None, None), None);
    // Prompt processing longer than the wait for the first token, or negative.
    for prompt in [1e12, 40.0, -1.0, f64::NAN] {
        assert_eq!(q(None, Some(prompt), Some(30_000)), None, "{prompt}");
    }
}

fn finished(events: &[&[u8]]) -> RequestRecord {
    let mut s = StreamState::new(Api::Completions);
    s.event(Field::Data, br#"{"choices":[{"text":"a"}]}"#, 30_000);
    for (i, e) in events.iter().enumerate() {
        s.event(Field::Data, e, 31_000 + i as u64);
    }
    s.event(Field::Data, b"[DONE]", 32_000);
    let mut rec = RequestRecord::default();
    s.finish(&mut rec, 32_100, None, None);
    rec
}

#[test]
fn prefix_cache_hits_and_draft_acceptance_as_each_server_reports_them() {
    // llama-server: `timings.cache_n`, `draft_n`, `draft_n_accepted`.
    let r = finished(&[br#"{"choices":[{"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":40,"completion_tokens":1},"timings":{"prompt_ms":2.0,"cache_n":32,"draft_n":6,"draft_n_accepted":4}}"#]);
    assert_eq!(r.error, None);
    assert_eq!(r.server.cached_prompt_tokens, Some(32));
    assert_eq!(
        (r.server.draft_tokens, r.server.draft_accepted_tokens),
        (Some(6), Some(4))
    );
    // vLLM, SGLang, OpenAI: `usage.prompt_tokens_details.cached_tokens`.
    let r = finished(&[br#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":16}}}"#]);
    assert_eq!(r.server.cached_prompt_tokens, Some(16));
    assert_eq!(r.server.draft_tokens, None);
    // A server that says nothing: every count null, never 0.
    let r = finished(&[br#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1}}"#]);
    assert_eq!(r.server, ServerCounts::default());
}

#[test]
fn impossible_cache_or_draft_counts_are_not_believed() {
    for (event, says) in [
        (&br#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":90}}}"#[..], "90 prompt tokens came from its cache, more than the 40"),
        (&br#"{"choices":[],"usage":{"completion_tokens":1},"timings":{"draft_n":2,"draft_n_accepted":5}}"#[..], "5 draft tokens were accepted of 2 drafted"),
        (&br#"{"choices":[],"usage":{"completion_tokens":1},"timings":{"draft_n_accepted":5}}"#[..], "without saying how many were drafted"),
    ] {
        let r = finished(&[event]);
        assert!(r.error.as_deref().is_some_and(|e| e.contains(says)), "{:?}", r.error);
        assert_eq!(r.server, ServerCounts::default());
    }
}

#[test]
fn usage_that_is_not_token_counts_fails_the_request_not_silently_dropped() {
    for usage in [
        r#"{"prompt_tokens":-3,"completion_tokens":1}"#,
        r#"{"prompt_tokens":8,"completion_tokens":1.5}"#,
        r#"{"prompt_tokens":"8","completion_tokens":1}"#,
        r#"{"prompt_tokens":8,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":-3}}"#,
    ] {
        let mut s = StreamState::new(Api::Completions);
        s.event(Field::Data, br#"{"choices":[{"text":"a"}]}"#, 30_000);
        let last =
            format!(r#"{{"choices":[{{"text":"","finish_reason":"length"}}],"usage":{usage}}}"#);
        s.event(Field::Data, last.as_bytes(), 31_000);
        s.event(Field::Data, b"[DONE]", 31_100);
        let mut rec = RequestRecord::default();
        s.finish(&mut rec, 31_200, None, None);
        let e = rec.error.unwrap_or_default();
        assert!(
            e.starts_with("the server's usage is not token counts"),
            "{usage}: {e:?}"
        );
    }
}

/// vLLM's continuous usage repeats the prompt count and raises the completion count on every
/// event: believed. Usage blocks that change the prompt count or lower the completion count
/// are two counts of one request: the request fails, neither believed.
#[test]
fn usage_blocks_that_disagree_fail_the_request() {
    let steady = finished(&[
        br#"{"choices":[{"text":"b"}],"usage":{"prompt_tokens":40,"completion_tokens":2}}"#,
        br#"{"choices":[{"text":"c"}],"usage":{"prompt_tokens":40,"completion_tokens":3}}"#,
    ]);
    assert_eq!(steady.error, None);
    assert_eq!(steady.output_tokens, Some(3));
    for (events, says) in [
        (
            [
                &br#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1}}"#[..],
                br#"{"choices":[],"usage":{"prompt_tokens":90,"completion_tokens":1}}"#,
            ],
            "prompt_tokens 40, then 90",
        ),
        (
            [
                &br#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":16}}"#[..],
                br#"{"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1}}"#,
            ],
            "completion_tokens 16, then 1",
        ),
    ] {
        let r = finished(&events);
        assert!(
            r.error.as_deref().is_some_and(|e| e.contains(says)),
            "{:?}",
            r.error
        );
    }
}

/// A request asks for one choice: content on choice 1 is not this request's stream, whether
/// the fast scanner or the parser sees it; a tool call's own index is not a choice's.
#[test]
fn an_event_for_another_choice_fails_the_request() {
    for event in [
        &br#"{"choices":[{"text":"b","index":1}]}"#[..],
        br#"{"choices":[{"text":"b","index":1,"finish_reason":"length"}],"usage":{"completion_tokens":2}}"#,
    ] {
        let r = finished(&[event]);
        assert!(
            r.error
                .as_deref()
                .is_some_and(|e| e.starts_with("an event for choice 1")),
            "{:?}",
            r.error
        );
    }
    let c = |s: &str| scan_event(s.as_bytes(), Api::Chat);
    assert!(!c(r#"{"choices":[{"index":0,"delta":{"content":"x"}}]}"#).needs_parse);
    assert!(c(r#"{"choices":[{"index":10,"delta":{"content":"x"}}]}"#).needs_parse);
    let mut s = StreamState::new(Api::Chat);
    s.event(
        Field::Data,
        br#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"f"}}]}}]}"#,
        10,
    );
    assert_eq!(s.error, None);
}
