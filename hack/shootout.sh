#!/usr/bin/env bash
# The shoot-out of issue 33 (docs/simulate.md): every demand profile of hack/gentrace --demand (deterministic
# per SEED) and the shared traces (../shared/traces, when present) in closed loop under the Hvpa of
# examples/hvpa-shootout.yaml, the HPA alone at 250m, 500m and 1000m per pod (4 GiB of memory per CPU, the
# ratio of the EP-0001 intervals), upstream's VPA alone and HPA+VPA. Writes per trace the summary JSON, the
# report and a markdown table into DIR, all the tables into DIR/shootout.md and the goal report
# (hack/shootoutgoals) into DIR/goals.md (both printed).
#
#   hack/shootout.sh [DIR]   (make shootout; SEED, HVPA_FILE, POLICIES, PROFILES and SIMULATE_ARGS, more
#                             flags of hvpa simulate such as --hpa-behavior none, may be set; PROFILES
#                             names the generated profiles, default the eight of issue 33: the extra ones
#                             are nightly, sixhourly, office, growth and stepup, closedloop.ExtraProfiles)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bin/shootout}
seed=${SEED:-1}
hvpa_file=${HVPA_FILE:-examples/hvpa-shootout.yaml}
policies=${POLICIES:-hvpa,hpa,vpa,hpa+vpa}
read -r -a extra <<< "${SIMULATE_ARGS:-}"
mkdir -p "$dir"
go build -o "$dir/hvpa" ./cmd/hvpa
# hack/ is a module of its own (hack/go.mod): built there, into this folder
go -C hack build -o "$(cd "$dir" && pwd)/gentrace" ./gentrace

traces=()
read -r -a profiles <<< "${PROFILES:-web spiky weekly flash ramp batch constant stepdown}"
for p in "${profiles[@]}"; do
	"$dir/gentrace" --demand "$p" --seed "$seed" | gzip -n > "$dir/$p.csv.gz"
	traces+=("$dir/$p.csv.gz")
done
for t in ../shared/traces/*.csv.gz; do
	[[ -e $t ]] && traces+=("$t")
done

out="$dir/shootout.md"
{
	echo "# Shoot-out: $hvpa_file, seed $seed"
	echo
	echo "Policies $policies; hpa and hpa+vpa at cpu=250m,memory=1Gi, cpu=500m,memory=2Gi and cpu=1000m,memory=4Gi per pod.${SIMULATE_ARGS:+ Also: $SIMULATE_ARGS.}"
} > "$out"
for t in "${traces[@]}"; do
	name=$(basename "$t" .csv.gz)
	echo "== $name" >&2
	{
		echo
		echo "## $name"
		echo
		"$dir/hvpa" simulate --closed-loop --trace "$t" --hvpa "$hvpa_file" --policy "$policies" \
			--hpa-requests cpu=250m,memory=1Gi --hpa-requests cpu=500m,memory=2Gi --hpa-requests cpu=1000m,memory=4Gi \
			--table markdown --summary-json "$dir/$name.json" --report "$dir/$name.html" ${extra[@]+"${extra[@]}"}
	} >> "$out"
done
cat "$out"

# the goals of issue 33 over every workload (closedloop.CheckGoals): written beside the tables, exit status
# kept 0 so that the tables are always there to read
{
	echo
	echo "## Goals: the Hvpa against the best baseline of each workload"
	echo
	HVPA_HACK_BIN=$dir bash hack/run.sh shootoutgoals "$dir"/*.json || true
} > "$dir/goals.md"
cat "$dir/goals.md"
