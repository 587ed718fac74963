package simulate

import (
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// DeadBand is the updater's dead band of the changes score: the applied target changes only when the new
// target differs from the applied one by more than 10% (CPU or memory; both are then applied).
const DeadBand = 0.1

// Scores are the scores of a run's targets against the usage (docs/simulate.md, "Scores"): for every usage
// sample, the target in force is the latest one strictly before it.
type Scores struct {
	// Scored samples per resource (a target was in force), the sum of max(target - usage, 0) / target, and
	// the samples whose usage was above the target.
	CPUSamples, MemorySamples int
	CPUIdleSum, MemoryIdleSum float64
	CPUOver, MemoryOver       int
	// OOMs is the trace's OOM events.
	OOMs int
	// Changes is the applications of an updater with DeadBand; ContainerDays the days (namespace, workload,
	// container)s had a target, summed.
	Changes       int
	ContainerDays float64
}

// CPUSlack is the mean over CPU samples of max(target - usage, 0) / target.
func (s Scores) CPUSlack() float64 { return ratio(s.CPUIdleSum, s.CPUSamples) }

// MemorySlack is the mean over memory samples of max(target - usage, 0) / target.
func (s Scores) MemorySlack() float64 { return ratio(s.MemoryIdleSum, s.MemorySamples) }

// CPUOverFraction is the share of CPU samples with usage above the target.
func (s Scores) CPUOverFraction() float64 { return ratio(float64(s.CPUOver), s.CPUSamples) }

// MemoryOverFraction is the share of memory samples with usage above the target.
func (s Scores) MemoryOverFraction() float64 { return ratio(float64(s.MemoryOver), s.MemorySamples) }

// ChangesPerContainerDay is the applied changes per container and day.
func (s Scores) ChangesPerContainerDay() float64 {
	if s.ContainerDays <= 0 {
		return 0
	}
	return float64(s.Changes) / s.ContainerDays
}

// sample scores one usage row against the target in force.
func (s *Scores) sample(target recommender.Amounts, row *trace.Row) {
	one := func(t int64, usage int64, n *int, idle *float64, over *int) {
		if t <= 0 {
			return
		}
		*n++
		if usage > t {
			*over++
			return
		}
		*idle += float64(t-usage) / float64(t)
	}
	if row.HasCPU {
		one(target.CPUMilli, row.CPU, &s.CPUSamples, &s.CPUIdleSum, &s.CPUOver)
	}
	if row.HasMemory {
		one(target.MemoryBytes, row.Memory, &s.MemorySamples, &s.MemoryIdleSum, &s.MemoryOver)
	}
}

// applied is what an updater with DeadBand applied of one container's targets.
type applied struct {
	target recommender.Amounts
	has    bool
}

// tick offers the target of one tick (interval: days per tick) to the updater and counts an application.
func (s *Scores) tick(a *applied, target recommender.Amounts, days float64) {
	s.ContainerDays += days
	if !a.has {
		a.target, a.has = target, true
		return
	}
	if changedOver(a.target, target, DeadBand) {
		a.target = target
		s.Changes++
	}
}
