#!/usr/bin/env bash
# OOM kills of the Hvpa's two recommender models on step demand, in closed loop (docs/simulate.md, "What the
# tests prove"): 16 step traces (the load and memory step up by 1.5x, 2x, 3x and 5x every 6 h, seeds 1 to 4;
# three workloads of 400m and 1 GiB at the low level, spread 1, 10% noise, 3 days, the demand of
# TestModelsOnStepAndDiurnal with other step sizes and seeds), each run by `hvpa simulate --closed-loop
# --compare` under the EP-0001 Hvpa with its HPA (examples/hvpa-kube-apiserver.yaml, for every workload).
# Prints the OOM kills per trace and model and their sums over the 16 traces.
#
#   hack/oomsteps.sh [DIR]   (default bin/oomsteps; SEEDS and STEPS may be set)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bin/oomsteps}
seeds=${SEEDS:-1 2 3 4}
steps=${STEPS:-1.5 2 3 5}
mkdir -p "$dir"
go build -o "$dir/hvpa" ./cmd/hvpa
# hack/ is a module of its own (hack/go.mod): built there, into this folder
go -C hack build -o "$(cd "$dir" && pwd)/gentrace" ./gentrace

# the EP-0001 Hvpa for every workload of the traces (targetRef.name "*")
{
	echo "apiVersion: autoscaling.k8s.io/v1alpha1"
	awk '/^---/{p=0} /^kind: Hvpa/{p=1} p' examples/hvpa-kube-apiserver.yaml | sed '0,/^    name: kube-apiserver$/s//    name: "*"/'
} > "$dir/hvpa.yaml"

# oom_kills FILE: "policy kills" per run of a summary JSON, summed over its workloads
oom_kills() {
	awk -F'"' '/"policy":/ {p=$4} /"oom_events":/ {gsub(/[^0-9]/, "", $3); k[p]+=$3} END {for (p in k) print p, k[p]}' "$1" | sort
}

printf '%-8s %-5s %12s %12s\n' step seed "total model" "per-pod model"
total=0 perpod=0
for step in $steps; do
	for seed in $seeds; do
		name="step-${step}x-seed-$seed"
		"$dir/gentrace" --shape step --workloads 3 --spread 1 --pods 1 --days 3 --cpu 400 --memory 1Gi \
			--step-cpu "$(awk -v s="$step" 'BEGIN{print 400*s}')" --step-memory "$(awk -v s="$step" 'BEGIN{printf "%dMi", 1024*s}')" \
			--step-every 6h --noise 0.1 --cpu-request 500 --memory-request 2Gi --seed "$seed" > "$dir/$name.csv"
		"$dir/hvpa" simulate --closed-loop --compare --hvpa "$dir/hvpa.yaml" --trace "$dir/$name.csv" \
			--summary-json "$dir/$name.json" > /dev/null 2> "$dir/$name.log"
		t=$(oom_kills "$dir/$name.json" | awk '$1 == "hvpa" {print $2}')
		p=$(oom_kills "$dir/$name.json" | awk '$1 == "hvpa[per-pod]" {print $2}')
		printf '%-8s %-5s %12s %12s\n' "${step}x" "$seed" "$t" "$p"
		total=$((total + t)) perpod=$((perpod + p))
	done
done
printf '%-14s %12s %12s\n' "sum" "$total" "$perpod"
