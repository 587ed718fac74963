package hvpacycle

import (
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Load sums one run's usage of a workload's pods, for one container, into the workload's load
// (docs/design/scaling.md section 2): L = sum over the live pods of max(0, usage - base(request of that
// pod)), per resource, with base from spec.baseResourcesPerReplica. The recommender loop and the simulator
// both feed an Hvpa's workload totals through it.
type Load struct {
	Base              [scaling.NumResources]*scaling.ChangeParams
	cpuMilli, memory  float64
	cpuUsage          float64 // the pods' whole CPU usage (the base included), millicores
	hasCPU, hasMemory bool
	at                time.Time // the newest sample of the sum
}

// Add adds one pod's usage at at (millicores and bytes; a negative value: that resource was not sampled)
// given the pod's requests (millicores and bytes).
func (l *Load) Add(at time.Time, cpuMilli, memoryBytes, cpuRequest, memoryRequest float64) {
	if cpuMilli >= 0 {
		l.cpuMilli += max(0, cpuMilli-l.Base[scaling.CPU].Base(cpuRequest))
		l.cpuUsage += cpuMilli
		l.hasCPU = true
	}
	if memoryBytes >= 0 {
		l.memory += max(0, memoryBytes-l.Base[scaling.Memory].Base(memoryRequest))
		l.hasMemory = true
	}
	if at.After(l.at) {
		l.at = at
	}
}

// Record adds the sum as one sample of the workload total t (nothing when no pod's usage was added), with the
// pods' whole CPU usage for the minutes its recurring bursts are read from (WorkloadTotal.AddLoadUsage).
func (l *Load) Record(t *recommender.WorkloadTotal) {
	if !l.hasCPU && !l.hasMemory {
		return
	}
	cpu, mem, usage := -1.0, -1.0, -1.0
	if l.hasCPU {
		cpu, usage = l.cpuMilli/1000, l.cpuUsage/1000
	}
	if l.hasMemory {
		mem = l.memory
	}
	t.AddLoadUsage(l.at, cpu, mem, usage)
}

// RecordOOM raises the memory of workload total t after an OOM kill at at of one of its pods (pods running,
// serving of them serving when it was killed): the recent load to at least pods x (bump - base(request)), the
// history to serving x that (WorkloadTotal.RecordPodOOM), the bump as upstream makes it from max(request, the
// killed container's window peak).
func RecordOOM(t *recommender.WorkloadTotal, base [scaling.NumResources]*scaling.ChangeParams, at time.Time, pods, serving int, request, peak float64) {
	t.RecordPodOOM(at, pods, serving, max(request, peak), base[scaling.Memory].Base(request))
}
