#!/usr/bin/env bash
# The GPU check of sloscope's energy figures, for a machine with an NVIDIA GPU (issue 27): the
# collector reads NVML's total-energy counter at the start and end of each repeat; this script
# checks that reading against an independent one — nvidia-smi sampling the board's power draw
# every 100 ms in its own process — while sloscope measures the test kit's scripted server (the
# GPU stays idle, so its draw is steady and the two must agree closely).
#
#   cargo build --release -p sloscope -p sloscope-testkit   # here, then carry target/release
#   bash scripts/gpu-check.sh [OUT]                          # on the GPU machine
#
# Passes when every repeat has `gpu_energy_j` > 0 and the run's mean power (energy ÷ repeat
# time) is within 15 % of nvidia-smi's mean draw over the same run; exit 1 otherwise, 2 when
# there is no GPU. Writes the run, the power samples and the comparison to OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-$(mktemp -d)}}
bin=${SLOSCOPE_RELEASE:-$root/target/release}
mkdir -p "$out"
if ! command -v nvidia-smi >/dev/null; then
  echo "gpu-check: no nvidia-smi here: not a GPU machine" >&2
  exit 2
fi
nvidia-smi --query-gpu=name,power.draw,enforced.power.limit --format=csv | tee "$out/gpu.csv" >&2
nvidia-smi --query-gpu=index,power.draw --format=csv,noheader,nounits -lms 100 > "$out/power.csv" &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
start=$(date +%s.%N)
SLOSCOPE_SCRIPTED_SERVER="$bin/scripted-server" "$bin/sloscope" run \
  --plan "$root/tests/fixtures/scripted/plan.toml" --out "$out/run" \
  --profiles throughput --candidates slots4 --no-baseline --quiet
end=$(date +%s.%N)
kill $sampler 2>/dev/null || true
"$bin/sloscope" analyze "$out/run" --format json > "$out/analysis.json"
python3 - "$out" "$start" "$end" <<'PY'
import json, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
run = json.load(open(f"{out}/run/runs/throughput--slots4.json"))
energy = [r.get("gpu_energy_j") for r in run["repeats"]]
print("gpu_energy_j per repeat:", energy)
if not energy or any(e is None or e <= 0 for e in energy):
    print("FAIL: a repeat without a positive NVML energy reading; notes:", run.get("notes"))
    sys.exit(1)
a = json.load(open(f"{out}/analysis.json"))
p = next(p for p in a["profiles"] if p["profile"] == "throughput")
watts = p["candidates"][0]["summary"]["mean_gpu_power_w"]
draw = {}
for line in open(f"{out}/power.csv"):
    parts = [x.strip() for x in line.split(",")]
    try:
        draw.setdefault(parts[0], []).append(float(parts[1]))
    except (IndexError, ValueError):
        pass
smi = sum(sum(v) / len(v) for v in draw.values())
ratio = watts / smi if smi > 0 else float("nan")
print(f"sloscope mean power {watts:.1f} W (NVML energy ÷ repeat time, all GPUs); "
      f"nvidia-smi mean draw {smi:.1f} W over {end - start:.1f} s ({sum(map(len, draw.values()))} samples); "
      f"ratio {ratio:.3f}")
json.dump({"gpu_energy_j": energy, "mean_gpu_power_w": watts, "nvidia_smi_w": smi, "ratio": ratio},
          open(f"{out}/gpu-check.json", "w"), indent=1)
sys.exit(0 if abs(ratio - 1) <= 0.15 else 1)
PY
