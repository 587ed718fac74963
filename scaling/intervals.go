package scaling

import (
	"math"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// EffectiveInterval is one effective scaling interval: a replica count and, per resource, the TOTAL (across
// all replicas) above which the workload scales up (Up) and below which it scales down (Down).
type EffectiveInterval struct {
	Replicas int32
	Up, Down [NumResources]float64
	// Pinned is set for horizontalOnly intervals: the per-pod value is pinned to the interval's maxResources.
	Pinned Values
	// Source is the index of the spec interval this effective interval came from.
	Source int
}

// PerPodMax is the per-pod maximum of resource r inside the interval: Up / Replicas.
func (e EffectiveInterval) PerPodMax(r Resource) float64 { return e.Up[r] / float64(e.Replicas) }

// PerPodAtDown is the per-pod value at the down boundary of resource r: Down / Replicas.
func (e EffectiveInterval) PerPodAtDown(r Resource) float64 { return e.Down[r] / float64(e.Replicas) }

// EffectiveIntervals derives the effective intervals from resolved scaling intervals (docs/design/scaling.md section 1).
// minReplicas is the HPA template's minReplicas (at least 1). A resource without maxResources in an interval
// is unbounded there (+Inf): FromHvpa resolves defaults first, so this happens only for resources that no
// container scales.
//
// It never trusts that the intervals were validated: any int32 bounds give at most MaxEffectiveIntervals
// intervals, or an error (a *field.Error on spec.scalingIntervals[i]) before any is made. The replica counts
// run in int64, so an interval up to math.MaxInt32 ends instead of wrapping around.
func EffectiveIntervals(intervals []Interval, minReplicas int32, overlap [NumResources]*ChangeParams) ([]EffectiveInterval, error) {
	minReplicas = max(minReplicas, 1)
	n := EffectiveIntervalCount(intervals, minReplicas)
	if n > MaxEffectiveIntervals { // the path is built for the error only: every decision comes here
		return nil, checkIntervalCount(intervals, minReplicas, field.NewPath("spec", "scalingIntervals"))
	}
	out := make([]EffectiveInterval, 0, n)
	prevR := int64(minReplicas) - 1
	var prevUp [NumResources]float64
	for i, in := range intervals {
		out = appendEffective(out, i, in, prevR, prevUp)
		prevR = int64(in.MaxReplicas)
		prevUp = out[len(out)-1].Up
	}
	setDownBoundaries(out, overlap)
	return out, nil
}

// appendEffective appends the effective intervals of scaling interval i (in), which starts after prevR
// replicas at the upper totals prevUp: one at in.MaxReplicas, or one per replica count with an extrapolation.
func appendEffective(out []EffectiveInterval, i int, in Interval, prevR int64, prevUp [NumResources]float64) []EffectiveInterval {
	var top, perPod [NumResources]float64 // R_i * M_i, M_i
	for _, r := range Resources {
		m, ok := in.MaxResources.Get(r)
		if !ok {
			m = math.Inf(1)
		}
		perPod[r] = m
		top[r] = float64(in.MaxReplicas) * m
	}
	last := int64(in.MaxReplicas)
	first := prevR + 1
	if in.Extrapolation == ExtrapolationNone || first > last {
		first = last
	}
	for rep := first; rep <= last; rep++ { // int64: no wrap-around at math.MaxInt32
		e := EffectiveInterval{Replicas: int32(rep), Source: i}
		for _, r := range Resources {
			switch in.Extrapolation {
			case ExtrapolationLinear:
				e.Up[r] = prevUp[r] + (top[r]-prevUp[r])*float64(rep-prevR)/float64(last-prevR)
			case ExtrapolationHorizontalOnly:
				e.Up[r] = float64(rep) * perPod[r]
				if in.MaxResources.Has(r) {
					e.Pinned.Set(r, perPod[r])
				}
			default:
				e.Up[r] = top[r]
			}
			if math.IsNaN(e.Up[r]) { // Inf - Inf in the linear formula: unbounded stays unbounded
				e.Up[r] = math.Inf(1)
			}
		}
		out = append(out, e)
	}
	return out
}

// setDownBoundaries sets each effective interval's down boundaries from the previous one's up boundaries and
// the overlap.
func setDownBoundaries(out []EffectiveInterval, overlap [NumResources]*ChangeParams) {
	for j := range out {
		for _, r := range Resources {
			if j == 0 {
				out[j].Down[r] = 0
				continue
			}
			up := out[j-1].Up[r]
			down := up
			if overlap[r] != nil {
				down = up - overlap[r].Base(up)
			}
			if math.IsInf(up, 1) || math.IsNaN(down) {
				down = out[j-1].Down[r]
			}
			out[j].Down[r] = max(out[j-1].Down[r], down, 0)
		}
	}
}
