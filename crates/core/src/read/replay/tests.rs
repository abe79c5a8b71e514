use super::*;

#[test]
fn jsonl_records_read_prompts_messages_and_caps() {
    let r = jsonl_record(r#"{"prompt": "hi there", "output_tokens": 12}"#)
        .unwrap()
        .unwrap();
    assert_eq!(r.prompt, Prompt::Text("hi there".into()));
    assert_eq!(r.output_tokens, Some(12));
    let r = jsonl_record(r#"{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "why?"}]}"#)
        .unwrap()
        .unwrap();
    assert_eq!(
        r.prompt,
        Prompt::Messages(vec![
            ("system".into(), "be brief".into()),
            ("user".into(), "why?".into())
        ])
    );
    assert_eq!(r.output_tokens, None);
    assert_eq!(jsonl_record("   ").unwrap(), None);
    for (bad, says) in [
        ("{", "not JSON"),
        ("[1]", "expected a JSON object"),
        (r#"{"prompt": 3}"#, "prompt is 3"),
        (r#"{"prompt": ""}"#, "non-empty"),
        (r#"{"question": "x"}"#, "no prompt, text or messages"),
        (r#"{"messages": [{"role": "user"}]}"#, "messages[0]"),
        (
            r#"{"prompt": "x", "output_tokens": -1}"#,
            "output_tokens is -1",
        ),
        (
            r#"{"prompt": "x", "output_tokens": 1.5}"#,
            "output_tokens is 1.5",
        ),
    ] {
        let e = jsonl_record(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn chat_messages_give_a_sessions_opening_and_follow_ups() {
    let r = jsonl_record(
        r#"{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello there"}, {"role": "user", "content": "more"}]}"#,
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        r.opening(),
        Prompt::Messages(vec![
            ("system".into(), "be brief".into()),
            ("user".into(), "hi".into())
        ])
    );
    assert_eq!(
        r.follow_ups,
        vec![FollowUp {
            text: "more".into(),
            reply_words: None
        }]
    );
    // Without sessions the record is sent as written.
    assert!(matches!(&r.prompt, Prompt::Messages(m) if m.len() == 4));
}

#[test]
fn sharegpt_takes_the_first_human_turn_and_its_reply() {
    let v = serde_json::json!({"id": "a", "conversations": [
        {"from": "system", "value": "sys"},
        {"from": "human", "value": "tell me a story"},
        {"from": "gpt", "value": "once upon a time there was"}]});
    let r = sharegpt_record(&v).unwrap().unwrap();
    assert_eq!(r.prompt, Prompt::Text("tell me a story".into()));
    assert_eq!(r.output_words, Some(6));
    assert!(r.follow_ups.is_empty());
    let chat = serde_json::json!({"conversations": [
        {"from": "human", "value": "a"}, {"from": "gpt", "value": "b c"},
        {"from": "human", "value": "d"}, {"from": "gpt", "value": "e f g"},
        {"from": "human", "value": "unanswered"}]});
    let r = sharegpt_record(&chat).unwrap().unwrap();
    assert_eq!(
        r.follow_ups,
        vec![FollowUp {
            text: "d".into(),
            reply_words: Some(3)
        }]
    );
    let lone = serde_json::json!({"conversations": [{"from": "human", "value": "hi"}]});
    assert_eq!(sharegpt_record(&lone).unwrap(), None);
    assert!(sharegpt_record(&serde_json::json!({"x": 1}))
        .unwrap_err()
        .contains("conversations"));
}

#[test]
fn traces_read_times_and_lengths() {
    let e = mooncake_entry(
        r#"{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [1, 2]}"#,
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        e,
        TraceEntry {
            at_us: 27_482_000,
            input_tokens: 6955,
            output_tokens: 52,
            hash_ids: vec![1, 2],
        }
    );
    for (line, says) in [
        (
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": 7}"#,
            "hash_ids is 7: expected a list",
        ),
        (
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1, -2]}"#,
            "hash_ids[1] is -2",
        ),
        (
            r#"{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": ["a"]}"#,
            "hash_ids[0] is \"a\"",
        ),
    ] {
        let e = mooncake_entry(line).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
    assert!(
        mooncake_entry(r#"{"timestamp": -1, "input_length": 1, "output_length": 1}"#)
            .unwrap_err()
            .contains("timestamp is -1")
    );
    assert!(mooncake_entry(r#"{"timestamp": 1, "output_length": 1}"#)
        .unwrap_err()
        .contains("input_length"));

    let cols = AzureColumns::from_header("TIMESTAMP,ContextTokens,GeneratedTokens").unwrap();
    let a = cols
        .entry("2023-11-16 18:15:46.6805900,374,44")
        .unwrap()
        .unwrap();
    let b = cols.entry("2023-11-16 18:15:50.0,10,5").unwrap().unwrap();
    assert_eq!((a.input_tokens, a.output_tokens), (374, 44));
    assert_eq!(b.at_us - a.at_us, 3_319_410);
    // 2023-11-16 00:00:00 UTC is 1_700_092_800 s after the epoch.
    assert_eq!(
        cols.entry("2023-11-16 00:00:00,1,1")
            .unwrap()
            .unwrap()
            .at_us,
        1_700_092_800_000_000
    );
    assert!(cols
        .entry("2023-13-16 18:15:46,1,1")
        .unwrap_err()
        .contains("TIMESTAMP"));
    assert!(cols
        .entry("2023-11-16 18:15:46,0,1")
        .unwrap_err()
        .contains("ContextTokens is \"0\""));
    assert!(cols
        .entry("2023-11-16 18:15:46,4")
        .unwrap_err()
        .contains("column 3"));
    assert!(AzureColumns::from_header("time,in,out")
        .unwrap_err()
        .contains("no timestamp column"));

    let t = Trace {
        file: "dir/t.jsonl".into(),
        format: TraceFormat::Mooncake,
        time_scale: Some(0.5),
        sha256: Some("ab".repeat(32)),
        block_tokens: None,
    };
    assert_eq!(t.problem(), None);
    let zero = Trace {
        block_tokens: Some(0),
        ..t.clone()
    };
    assert!(zero.problem().unwrap().contains("block_tokens 0"));
    assert_eq!(t.offsets_us(&[a, b]), vec![0, 1_659_705]);
    assert_eq!(
        t.label(),
        "Mooncake trace t.jsonl (sha256 abababababab…), time ×0.5"
    );
    let bad = Trace {
        time_scale: Some(0.0),
        ..t.clone()
    };
    assert!(bad.problem().unwrap().contains("time_scale 0"));
    let bad = Trace {
        sha256: Some("xyz".into()),
        ..t
    };
    assert!(bad.problem().unwrap().contains("64 hexadecimal"));
}
