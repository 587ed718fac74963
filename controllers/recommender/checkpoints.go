package recommender

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
)

// CheckpointVersion is the format version written into checkpoints.
const CheckpointVersion = "v3"

// CheckpointName is the name of the checkpoint of one container of one VPA.
func CheckpointName(vpa, container string) string { return vpa + "-" + container }

// historyLoad is what of the usage history has loaded. The checkpoints of each kind are listed at every run
// until a list succeeds, each kind on its own (one missing CRD or one failed list does not hold the other
// back); until a kind has loaded, none of its checkpoints is written, so a history that did not load is
// never replaced by the minutes of live usage since the start. Prometheus' history (--storage=prometheus) is
// read once, at the first run: the VPAs' history after that run comes from the samples held since.
type historyLoad struct {
	tried      bool  // the first run tried to load
	prometheus bool  // Prometheus' history loaded: the VPAs' per-pod history comes from it
	vpa, hvpa  bool  // the VerticalPodAutoscalerCheckpoints, the HvpaCheckpoints listed and loaded
	err        error // why the last attempt left a kind unloaded
}

// done: every kind of checkpoint has loaded.
func (h *historyLoad) done() bool { return h.vpa && h.hvpa }

// listed: the checkpoints of kind (vpav1.KindVerticalPodAutoscalerCheckpoint or hvpav1alpha1.KindHvpaCheckpoint) were listed and loaded.
func (h *historyLoad) listed(kind string) bool {
	if kind == hvpav1alpha1.KindHvpaCheckpoint {
		return h.hvpa
	}
	return h.vpa
}

// vpas: the VPAs' history has loaded, from Prometheus or from their checkpoints.
func (h *historyLoad) vpas() bool { return h.prometheus || h.vpa }

// source is where the VPAs' history came from (the history_source metric).
func (h *historyLoad) source(storage string) string {
	switch {
	case h.prometheus:
		return historyPrometheus
	case !h.vpa:
		return historyNone
	case storage == StoragePrometheus:
		return historyCheckpointFallback
	}
	return historyCheckpoint
}

// loadHistory loads what of the usage history has not loaded yet (historyLoad): Prometheus' history at the
// first run with --storage=prometheus, then each kind of checkpoint not loaded yet. What fails is logged and
// tried again at the next run.
func (r *Recommender) loadHistory(ctx context.Context) {
	logger := logf.FromContext(ctx)
	if !r.hist.tried && r.Opts.Storage == StoragePrometheus {
		if err := r.loadPrometheusHistory(ctx); err != nil {
			logger.Error(err, "reading usage history from Prometheus failed; the VPAs' history comes from their checkpoints instead")
		} else {
			r.hist.prometheus = true
		}
	}
	r.hist.tried = true
	var errs []error
	if !r.hist.vpa {
		if err := r.loadVPACheckpoints(ctx); err != nil {
			errs = append(errs, err)
		} else {
			r.hist.vpa = true
		}
	}
	if !r.hist.hvpa {
		if err := r.loadHvpaCheckpoints(ctx); err != nil {
			errs = append(errs, err)
		} else {
			r.hist.hvpa = true
		}
	}
	r.hist.err = errors.Join(errs...)
	if r.hist.err != nil && ctx.Err() == nil {
		logger.Error(r.hist.err, "loading checkpoints failed; tried again at the next run, and no checkpoint of a kind that has not loaded is written meanwhile")
	}
	r.Metrics.setHistorySource(r.hist.source(r.Opts.Storage))
}

// loadVPACheckpoints lists the VerticalPodAutoscalerCheckpoints and loads them: the VPAs' histories (with
// Prometheus' history loaded, theirs comes from it: a checkpoint is then kept until this recommender's
// history of the container is as long, see saveCheckpointAs), and the Hvpa histories earlier versions kept
// there (moved to HvpaCheckpoints at their next write).
func (r *Recommender) loadVPACheckpoints(ctx context.Context) error {
	var l vpav1.VerticalPodAutoscalerCheckpointList
	if err := r.Client.List(ctx, &l); err != nil {
		return fmt.Errorf("listing VerticalPodAutoscalerCheckpoints: %w", err)
	}
	loaded := 0
	for i := range l.Items {
		cp := &l.Items[i]
		ref := checkpointRef{vpav1.KindVerticalPodAutoscalerCheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}}
		r.seen[ref] = true
		writer := cp.Labels[WriterLabel]
		if cp.Labels[OwnerKindLabel] != hvpav1alpha1.KindHvpa {
			if r.hist.prometheus {
				r.noteCheckpoint(ref, vpaContainer{cp.Namespace, cp.Spec.VPAObjectName, cp.Spec.ContainerName}, cp.Status, writer)
			} else if r.loadCheckpoint(ctx, ref, cp.Spec.VPAObjectName, cp.Spec.ContainerName, cp.Status, writer, false) {
				loaded++
			}
			continue
		}
		// an earlier hvpa's history of an Hvpa, where upstream's garbage collection can delete it: moved to
		// an HvpaCheckpoint at its next write, then deleted; an HvpaCheckpoint loaded already wins
		owner := hvpaOwner(cp.Spec.VPAObjectName)
		r.legacy[vpaContainer{cp.Namespace, owner, cp.Spec.ContainerName}] = ref.NamespacedName
		own := checkpointRef{hvpav1alpha1.KindHvpaCheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: CheckpointName(cp.Spec.VPAObjectName, cp.Spec.ContainerName)}}
		if cp.Labels[HistoryLabel] == HistoryWorkloadTotal && !r.replaceable[own] { // per-pod histories of even earlier versions start anew
			if r.loadCheckpoint(ctx, ref, owner, cp.Spec.ContainerName, cp.Status, writer, true) {
				loaded++
			}
		}
	}
	logf.FromContext(ctx).Info("loaded checkpoints", "kind", vpav1.KindVerticalPodAutoscalerCheckpoint, "count", loaded, "listed", len(l.Items), "fromPrometheus", r.hist.prometheus)
	return nil
}

// loadHvpaCheckpoints lists the HvpaCheckpoints and loads them as the Hvpas' workload totals (Prometheus has
// no workload totals: they always come from here).
func (r *Recommender) loadHvpaCheckpoints(ctx context.Context) error {
	var hl hvpav1alpha1.HvpaCheckpointList
	if err := r.Client.List(ctx, &hl); err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("listing HvpaCheckpoints: %w (install the chart's CRDs, charts/hvpa/crds: Hvpa histories are neither loaded nor written until then)", err)
		}
		return fmt.Errorf("listing HvpaCheckpoints: %w", err)
	}
	loaded := 0
	for i := range hl.Items {
		cp := &hl.Items[i]
		ref := checkpointRef{hvpav1alpha1.KindHvpaCheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}}
		r.seen[ref] = true
		if r.loadCheckpoint(ctx, ref, hvpaOwner(cp.Spec.HvpaName), cp.Spec.ContainerName, cp.Status.VerticalPodAutoscalerCheckpointStatus, cp.Labels[WriterLabel], true) {
			r.loadMinutes(ref, hvpaOwner(cp.Spec.HvpaName), cp.Spec.ContainerName, cp.Status)
			loaded++
		}
	}
	logf.FromContext(ctx).Info("loaded checkpoints", "kind", hvpav1alpha1.KindHvpaCheckpoint, "count", loaded, "listed", len(hl.Items))
	return nil
}

// loadCheckpoint loads one checkpoint into the state: a VPA container's initial history, or an Hvpa
// container's workload total (hvpa). A checkpoint that does not load (dated in the future, a NaN weight) is
// logged and skipped; this recommender may replace it. It reports whether the checkpoint loaded.
func (r *Recommender) loadCheckpoint(ctx context.Context, ref checkpointRef, owner, container string, status vpav1.VerticalPodAutoscalerCheckpointStatus,
	writer string, hvpa bool) bool {
	m := r.model(r.Base)
	r.replaceable[ref] = true // loaded into the state, or unreadable: its history is not lost by a write
	a, err := loadAggregate(m, status, r.Clock.Now())
	if err != nil {
		logf.FromContext(ctx).Error(err, "skipping a checkpoint", "kind", ref.kind, "checkpoint", ref.Namespace+"/"+ref.Name)
		return false
	}
	key := recommender.OwnerKey{Namespace: ref.Namespace, Owner: owner, Container: container}
	if hvpa {
		r.state.LoadTotal(m, key, a)
	} else {
		r.state.SetInitial(key, a)
	}
	r.noteCheckpoint(ref, vpaContainer{ref.Namespace, owner, container}, status, writer)
	r.historyAt[vpaContainer{ref.Namespace, owner, container}] = status.LastUpdateTime.Time
	return true
}

// loadMinutes adds what an HvpaCheckpoint keeps for the anticipation of recurring bursts (the workload's CPU
// load of its last minutes, the times of its bursts) to its workload total: a recurring burst is anticipated
// from the first run on.
func (r *Recommender) loadMinutes(ref checkpointRef, owner, container string, s hvpav1alpha1.HvpaCheckpointStatus) {
	var c recommender.MinutesCheckpoint
	if s.CPUMinutes != nil {
		c.Start, c.MilliCores = s.CPUMinutes.Start.Time, s.CPUMinutes.MilliCores
	}
	for _, b := range s.CPUBursts {
		c.Bursts = append(c.Bursts, recommender.BurstCheckpoint{Start: b.Start.Time, Minutes: int(b.Minutes), PeakMilliCores: b.PeakMilliCores})
	}
	if a := s.CPUBurstAhead; a != nil {
		c.Ahead = &recommender.AheadCheckpoint{From: a.From.Time, To: a.To.Time, LevelMilliCores: a.LevelMilliCores, BeforeMilliCores: -1}
		if a.Ended != nil {
			c.Ahead.Ended = a.Ended.Time
		}
		if a.EndedEarliest != nil {
			c.Ahead.EndedEarliest = a.EndedEarliest.Time
		}
		if a.BeforeMilliCores != nil {
			c.Ahead.BeforeMilliCores = *a.BeforeMilliCores
		}
	}
	if len(c.MilliCores) == 0 && len(c.Bursts) == 0 && c.Ahead == nil {
		return
	}
	key := recommender.OwnerKey{Namespace: ref.Namespace, Owner: owner, Container: container}
	r.state.LoadMinutes(r.model(r.Base), key, c, r.Clock.Now())
}

// setMinutes sets a workload total's minutes, bursts and burst ahead in an HvpaCheckpoint's status.
func setMinutes(s *hvpav1alpha1.HvpaCheckpointStatus, c recommender.MinutesCheckpoint) {
	if len(c.MilliCores) > 0 {
		s.CPUMinutes = &hvpav1alpha1.CPUMinutes{Start: metav1.NewTime(c.Start), MilliCores: c.MilliCores}
	}
	for _, b := range c.Bursts {
		s.CPUBursts = append(s.CPUBursts, hvpav1alpha1.CPUBurst{Start: metav1.NewTime(b.Start), Minutes: int32(b.Minutes), PeakMilliCores: b.PeakMilliCores})
	}
	if a := c.Ahead; a != nil {
		s.CPUBurstAhead = &hvpav1alpha1.CPUBurstAhead{From: metav1.NewTime(a.From), To: metav1.NewTime(a.To), LevelMilliCores: a.LevelMilliCores}
		if !a.Ended.IsZero() {
			s.CPUBurstAhead.Ended = ptr.To(metav1.NewTime(a.Ended))
		}
		if !a.EndedEarliest.IsZero() && a.EndedEarliest.Before(a.Ended) {
			s.CPUBurstAhead.EndedEarliest = ptr.To(metav1.NewTime(a.EndedEarliest))
		}
		if a.BeforeMilliCores >= 0 {
			s.CPUBurstAhead.BeforeMilliCores = ptr.To(a.BeforeMilliCores)
		}
	}
}

// noteCheckpoint remembers a checkpoint listed at start: when it was written (the round-robin of the writes)
// and whether this recommender writes it.
func (r *Recommender) noteCheckpoint(ref checkpointRef, key vpaContainer, status vpav1.VerticalPodAutoscalerCheckpointStatus, writer string) {
	r.written[key] = status.LastUpdateTime.Time
	if writer == r.Opts.Name {
		r.ours[ref] = true
	}
}

// loadAggregate reads a checkpoint's history into an aggregate of m: only a checkpoint of CheckpointVersion,
// as upstream's recommender reads (another version numbers its buckets otherwise, or is not a checkpoint).
func loadAggregate(m *recommender.Model, s vpav1.VerticalPodAutoscalerCheckpointStatus, now time.Time) (*recommender.Aggregate, error) {
	if s.Version != CheckpointVersion {
		return nil, fmt.Errorf("checkpoint version %q: only %s is read", s.Version, CheckpointVersion)
	}
	return m.LoadAggregate(fromCheckpoint(s), now)
}

func fromCheckpoint(s vpav1.VerticalPodAutoscalerCheckpointStatus) recommender.AggregateCheckpoint {
	return recommender.AggregateCheckpoint{
		CPU:          recommender.HistogramCheckpoint{Reference: s.CPUHistogram.ReferenceTimestamp.Time, BucketWeights: s.CPUHistogram.BucketWeights, TotalWeight: s.CPUHistogram.TotalWeight},
		Memory:       recommender.HistogramCheckpoint{Reference: s.MemoryHistogram.ReferenceTimestamp.Time, BucketWeights: s.MemoryHistogram.BucketWeights, TotalWeight: s.MemoryHistogram.TotalWeight},
		FirstSample:  s.FirstSampleStart.Time,
		LastSample:   s.LastSampleStart.Time,
		TotalSamples: s.TotalSamplesCount,
	}
}

// CheckpointStatus is an aggregate's checkpoint as the status of a VerticalPodAutoscalerCheckpoint written at
// now (what the recommender writes; the scale benchmark seeds aged history with it).
func CheckpointStatus(a recommender.AggregateCheckpoint, now time.Time) vpav1.VerticalPodAutoscalerCheckpointStatus {
	return vpav1.VerticalPodAutoscalerCheckpointStatus{
		LastUpdateTime:    metav1.NewTime(now),
		Version:           CheckpointVersion,
		CPUHistogram:      vpav1.HistogramCheckpoint{ReferenceTimestamp: metav1.NewTime(a.CPU.Reference), BucketWeights: a.CPU.BucketWeights, TotalWeight: a.CPU.TotalWeight},
		MemoryHistogram:   vpav1.HistogramCheckpoint{ReferenceTimestamp: metav1.NewTime(a.Memory.Reference), BucketWeights: a.Memory.BucketWeights, TotalWeight: a.Memory.TotalWeight},
		FirstSampleStart:  metav1.NewTime(a.FirstSample),
		LastSampleStart:   metav1.NewTime(a.LastSample),
		TotalSamplesCount: a.TotalSamples,
	}
}

// writeCheckpoints writes the checkpoints of the served VPAs and Hvpas round-robin, the longest unwritten
// first: none written within the checkpoint period, at most CheckpointQuota of them, until the time budget
// of the run is spent (or the context ends). It returns how many it wrote.
func (r *Recommender) writeCheckpoints(ctx context.Context, list []*served, hvpas []*servedHvpa) int {
	jobs := r.checkpointJobs(list, hvpas)
	start := r.Clock.Now()
	quota := CheckpointQuota(len(jobs), r.Opts.Interval, r.Opts.CheckpointPeriod)
	if len(jobs) > quota {
		jobs = jobs[:quota]
	}
	for i, j := range jobs {
		if last, ok := r.written[j.key]; ok && start.Sub(last) < r.Opts.CheckpointPeriod {
			jobs = jobs[:i] // the longest unwritten was written within the period: so were all the others
			break
		}
	}
	// the statuses are taken from the model here, one after the other (the model is not shared with the
	// writers); the requests go UpdateWorkers at a time, none started past the budget
	var written atomic.Int64
	var g errgroup.Group // its writers return no error: each failure is logged (notWritten)
	g.SetLimit(r.Opts.UpdateWorkers)
	for _, j := range jobs {
		if r.Clock.Now().Sub(start) >= r.Opts.CheckpointBudget || ctx.Err() != nil { // a budget of 0: none
			break
		}
		now := r.Clock.Now()
		status := hvpav1alpha1.HvpaCheckpointStatus{VerticalPodAutoscalerCheckpointStatus: CheckpointStatus(j.save(now), now)}
		if j.minutes != nil {
			if c, ok := j.minutes(); ok {
				setMinutes(&status, c)
			}
		}
		g.Go(func() error {
			if err := r.saveCheckpoint(ctx, j.key.ns, j.owner, j.kind, j.key.container, status); err != nil {
				if ctx.Err() == nil { // at shutdown the checkpoint is written by the next leader, not an error
					r.notWritten(ctx, j.key, err, now)
				}
				return nil
			}
			r.cpMu.Lock()
			r.written[j.key] = now
			r.cpMu.Unlock()
			written.Add(1)
			return nil
		})
	}
	_ = g.Wait()
	r.Metrics.CheckpointsWritten.Add(float64(written.Load()))
	return int(written.Load())
}

// checkpointJob is one checkpoint a run may write.
type checkpointJob struct {
	key   vpaContainer
	owner string // object name
	kind  string // VerticalPodAutoscaler or Hvpa
	save  func(now time.Time) recommender.AggregateCheckpoint
	// minutes: an Hvpa's workload total's CPU load of its last minutes and the times of its bursts (nil for a
	// VPA)
	minutes func() (recommender.MinutesCheckpoint, bool)
}

// running says whether a pod of namespace ns runs, as this run tracks it (nil before the first run's pods
// are matched: every pod).
func (r *Recommender) running(ns string) func(pod string) bool {
	if r.tracked == nil {
		return nil
	}
	tracked := r.tracked
	return func(pod string) bool {
		_, ok := tracked[types.NamespacedName{Namespace: ns, Name: pod}]
		return ok
	}
}

// checkpointJobs lists the checkpoints of the served VPAs and Hvpas, the longest unwritten first.
func (r *Recommender) checkpointJobs(list []*served, hvpas []*servedHvpa) []checkpointJob {
	var jobs []checkpointJob
	for _, s := range list {
		if s.err != nil {
			continue
		}
		match := matches(s.target.Selector)
		merged := s.merged // this run's, from its status
		if merged == nil {
			merged = r.MergedAggregates(s.vpa.Namespace, s.vpa.Name, s.target.Selector, s.model)
		}
		for name, a := range merged {
			if !a.IsEmpty() {
				m, ns := s.model, s.vpa.Namespace
				jobs = append(jobs, checkpointJob{vpaContainer{ns, s.vpa.Name, name}, s.vpa.Name, vpav1.KindVerticalPodAutoscaler, func(now time.Time) recommender.AggregateCheckpoint {
					return m.SaveAggregate(a, r.state.Feeding(ns, name, match, r.running(ns)), now)
				}, nil})
			}
		}
	}
	for _, h := range hvpas {
		owner := hvpaOwner(h.hvpa.Name)
		r.state.Totals(h.hvpa.Namespace, owner, func(name string, t *recommender.WorkloadTotal) {
			if !t.Aggregate.IsEmpty() {
				jobs = append(jobs, checkpointJob{vpaContainer{h.hvpa.Namespace, owner, name}, h.hvpa.Name, hvpav1alpha1.KindHvpa, t.Checkpoint, t.Minutes})
			}
		})
	}
	sort.Slice(jobs, func(i, j int) bool {
		wi, wj := r.written[jobs[i].key], r.written[jobs[j].key]
		if !wi.Equal(wj) {
			return wi.Before(wj)
		}
		a, b := jobs[i].key, jobs[j].key // ties (checkpoints loaded with one time): by name, without allocating
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.vpa, b.vpa), cmp.Compare(a.container, b.container)) < 0
	})
	return jobs
}

// notWritten logs a checkpoint a run did not write; one kept because it holds more history than this
// recommender's is asked again a period later.
func (r *Recommender) notWritten(ctx context.Context, key vpaContainer, err error, now time.Time) {
	var kept *longerHistoryError
	if errors.As(err, &kept) {
		logf.FromContext(ctx).V(1).Info("checkpoint kept: it holds more history than this recommender's", "vpa", key.ns+"/"+key.vpa,
			"container", key.container, "reason", err.Error())
		r.cpMu.Lock()
		r.written[key] = now
		r.cpMu.Unlock()
		return
	}
	logf.FromContext(ctx).Error(err, "writing checkpoint", "vpa", key.ns+"/"+key.vpa, "container", key.container)
}

// longerHistoryError: a checkpoint whose history this recommender has not loaded (--storage=prometheus, or
// written by another one since) holds more of it than the status that would replace it.
type longerHistoryError struct {
	ref            checkpointRef
	stored, status vpav1.VerticalPodAutoscalerCheckpointStatus
}

func (e *longerHistoryError) Error() string {
	return fmt.Sprintf("%s %s holds %d samples since %s, more history than the %d samples since %s that would replace it", e.ref.kind, e.ref.NamespacedName,
		e.stored.TotalSamplesCount, e.stored.FirstSampleStart.UTC().Format(time.RFC3339), e.status.TotalSamplesCount, e.status.FirstSampleStart.UTC().Format(time.RFC3339))
}

// longerHistory reports whether a stored checkpoint's history is longer than status's: a higher confidence
// (min(days from its first to its last sample, samples / 1440): what the recommendation rests on), or as
// high with more samples; a checkpoint whose last sample is older than keep (the memory history: expired) or
// that holds nothing is not.
func longerHistory(stored, status vpav1.VerticalPodAutoscalerCheckpointStatus, keep time.Duration, now time.Time) bool {
	if stored.TotalSamplesCount <= 0 || now.Sub(stored.LastSampleStart.Time) > keep {
		return false
	}
	confidence := func(s vpav1.VerticalPodAutoscalerCheckpointStatus) float64 {
		a := recommender.Aggregate{FirstSample: s.FirstSampleStart.Time, LastSample: s.LastSampleStart.Time, TotalSamples: s.TotalSamplesCount}
		return a.Confidence()
	}
	cs, cn := confidence(stored), confidence(status)
	return cs > cn || (cs == cn && stored.TotalSamplesCount > status.TotalSamplesCount)
}

// CheckpointQuota is how many checkpoints one run writes: n x interval / period (at least one), so that
// each of n checkpoints is written about once per period, spread over the runs rather than all at once.
// Without a period every checkpoint is written at every run.
func CheckpointQuota(n int, interval, period time.Duration) int {
	if period <= 0 || interval <= 0 {
		return n
	}
	return max(1, int(math.Ceil(float64(n)*float64(interval)/float64(period))))
}

// checkpointRef names a checkpoint object of either kind.
type checkpointRef struct {
	kind string // vpav1.KindVerticalPodAutoscalerCheckpoint or hvpav1alpha1.KindHvpaCheckpoint
	types.NamespacedName
}

// saveCheckpoint writes the checkpoint of one container of a VPA (a VerticalPodAutoscalerCheckpoint) or of
// an Hvpa (an HvpaCheckpoint: upstream's garbage collection deletes every VerticalPodAutoscalerCheckpoint
// that names no VPA). An Hvpa's history an earlier hvpa kept in a VerticalPodAutoscalerCheckpoint is deleted
// once its HvpaCheckpoint is written.
func (r *Recommender) saveCheckpoint(ctx context.Context, ns, owner, kind, container string, status hvpav1alpha1.HvpaCheckpointStatus) error {
	name := CheckpointName(owner, container)
	if kind != hvpav1alpha1.KindHvpa {
		return saveCheckpointAs(ctx, r, checkpointRef{vpav1.KindVerticalPodAutoscalerCheckpoint, types.NamespacedName{Namespace: ns, Name: name}}, status,
			&vpav1.VerticalPodAutoscalerCheckpoint{}, func(cp *vpav1.VerticalPodAutoscalerCheckpoint) (string, string, vpav1.VerticalPodAutoscalerCheckpointStatus) {
				if cp.Labels[OwnerKindLabel] == hvpav1alpha1.KindHvpa {
					return hvpaOwner(cp.Spec.VPAObjectName), cp.Spec.ContainerName, cp.Status
				}
				return cp.Spec.VPAObjectName, cp.Spec.ContainerName, cp.Status
			}, owner, container, func(s hvpav1alpha1.HvpaCheckpointStatus) *vpav1.VerticalPodAutoscalerCheckpoint {
				return &vpav1.VerticalPodAutoscalerCheckpoint{Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: owner, ContainerName: container},
					Status: s.VerticalPodAutoscalerCheckpointStatus}
			})
	}
	err := saveCheckpointAs(ctx, r, checkpointRef{hvpav1alpha1.KindHvpaCheckpoint, types.NamespacedName{Namespace: ns, Name: name}}, status,
		&hvpav1alpha1.HvpaCheckpoint{}, func(cp *hvpav1alpha1.HvpaCheckpoint) (string, string, vpav1.VerticalPodAutoscalerCheckpointStatus) {
			return cp.Spec.HvpaName, cp.Spec.ContainerName, cp.Status.VerticalPodAutoscalerCheckpointStatus
		},
		owner, container, func(s hvpav1alpha1.HvpaCheckpointStatus) *hvpav1alpha1.HvpaCheckpoint {
			return &hvpav1alpha1.HvpaCheckpoint{Spec: hvpav1alpha1.HvpaCheckpointSpec{HvpaName: owner, ContainerName: container}, Status: s}
		})
	key := vpaContainer{ns, hvpaOwner(owner), container}
	r.cpMu.Lock()
	old, ok := r.legacy[key]
	r.cpMu.Unlock()
	if err == nil && ok {
		cp := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: old.Namespace, Name: old.Name}}
		if derr := r.Client.Delete(ctx, cp); derr != nil && !apierrors.IsNotFound(derr) {
			return fmt.Errorf("deleting %s/%s, moved to an HvpaCheckpoint: %w", old.Namespace, old.Name, derr)
		}
		r.cpMu.Lock()
		delete(r.legacy, key)
		delete(r.ours, checkpointRef{vpav1.KindVerticalPodAutoscalerCheckpoint, old})
		delete(r.replaceable, checkpointRef{vpav1.KindVerticalPodAutoscalerCheckpoint, old})
		r.cpMu.Unlock()
	}
	return err
}

// saveCheckpointAs writes status into the checkpoint ref (of type T), creating it (fresh) when it is missing,
// refusing one that belongs to another owner (names collide), and labelling one another recommender wrote
// as this one's.
func saveCheckpointAs[T client.Object](ctx context.Context, r *Recommender, ref checkpointRef, status hvpav1alpha1.HvpaCheckpointStatus,
	cp T, ownerOf func(T) (string, string, vpav1.VerticalPodAutoscalerCheckpointStatus), owner, container string,
	fresh func(hvpav1alpha1.HvpaCheckpointStatus) T) error {
	if ours, replaceable, _ := r.checkpointState(ref); ours && replaceable {
		// this recommender's own checkpoint (loaded at start or written since): its status replaced in one
		// request, no read first (checkpoints are not cached: a list at start and at each garbage collection)
		err := r.replaceCheckpointStatus(ctx, ref, status)
		if !apierrors.IsNotFound(err) {
			return err
		}
		r.cpMu.Lock()
		delete(r.ours, ref) // deleted meanwhile: created again below
		delete(r.seen, ref)
		r.cpMu.Unlock()
	}
	create := func() error {
		c := fresh(status)
		c.SetNamespace(ref.Namespace)
		c.SetName(ref.Name)
		c.SetLabels(map[string]string{WriterLabel: r.Opts.Name})
		if err := r.Client.Create(ctx, c); err != nil {
			return err
		}
		if r.statusKept(ctx, ref.kind, c, status) {
			r.markOurs(ref)
			return nil
		}
		return r.replaced(ctx, ref, status) // a CRD with a status subresource dropped it
	}
	if _, _, seen := r.checkpointState(ref); r.hist.listed(ref.kind) && !seen {
		// not there when its kind was listed, nor written since: created without a read first (one another
		// recommender created meanwhile is read below)
		err := create()
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if err := r.Client.Get(ctx, ref.NamespacedName, cp); apierrors.IsNotFound(err) {
		return create()
	} else if err != nil {
		return err
	}
	o, c, stored := ownerOf(cp)
	if o != owner || c != container {
		return fmt.Errorf("%s %s belongs to %s container %s, not to %s container %s: the names collide; rename one of the objects",
			ref.kind, ref.Name, o, c, owner, container)
	}
	if err := r.adopt(ctx, ref, cp, stored, status.VerticalPodAutoscalerCheckpointStatus); err != nil {
		return err
	}
	return r.replaced(ctx, ref, status)
}

// adopt makes a stored checkpoint of the right owner this recommender's to write: a history it has not loaded
// is never replaced by a shorter one (longerHistoryError), and one another recommender wrote gets this one's
// writer label.
func (r *Recommender) adopt(ctx context.Context, ref checkpointRef, cp client.Object, stored, status vpav1.VerticalPodAutoscalerCheckpointStatus) error {
	if _, replaceable, _ := r.checkpointState(ref); !replaceable && longerHistory(stored, status, r.Base.MemoryHistory(), r.Clock.Now()) {
		return &longerHistoryError{ref, stored, status}
	}
	lbls := cp.GetLabels()
	if lbls[WriterLabel] == r.Opts.Name {
		return nil
	}
	// written by another recommender serving this object before (an earlier hvpa, or upstream's): this one
	// writes it now, so its garbage collection may delete it once its owner is gone
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[WriterLabel] = r.Opts.Name
	cp.SetLabels(lbls)
	return r.Client.Update(ctx, cp)
}

// replaced writes status into the checkpoint ref, which exists with this recommender's label: from now on
// its own, written in one request.
func (r *Recommender) replaced(ctx context.Context, ref checkpointRef, status hvpav1alpha1.HvpaCheckpointStatus) error {
	if err := r.replaceCheckpointStatus(ctx, ref, status); err != nil {
		return err
	}
	r.markOurs(ref)
	return nil
}

// checkpointState is what this recommender knows of a checkpoint (the writers of a run share it: under cpMu).
func (r *Recommender) checkpointState(ref checkpointRef) (ours, replaceable, seen bool) {
	r.cpMu.Lock()
	defer r.cpMu.Unlock()
	return r.ours[ref], r.replaceable[ref], r.seen[ref]
}

// markOurs notes a checkpoint this recommender has written: its own from now on, replaced in one request.
func (r *Recommender) markOurs(ref checkpointRef) {
	r.cpMu.Lock()
	defer r.cpMu.Unlock()
	r.ours[ref], r.replaceable[ref], r.seen[ref] = true, true, true
}

// replaceCheckpointStatus replaces a checkpoint's whole status (a JSON patch: "add" replaces the member, so
// that histogram buckets the new status no longer has are gone, which a merge patch would keep): a patch of
// the object, as upstream's recommender writes, or of its status subresource where the CRD has one. A
// VerticalPodAutoscalerCheckpoint takes the VPA status alone (upstream's schema).
func (r *Recommender) replaceCheckpointStatus(ctx context.Context, ref checkpointRef, status hvpav1alpha1.HvpaCheckpointStatus) error {
	var value any = status.VerticalPodAutoscalerCheckpointStatus
	if ref.kind == hvpav1alpha1.KindHvpaCheckpoint {
		value = status
	}
	patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": value}})
	if err != nil {
		return err
	}
	var cp client.Object = &vpav1.VerticalPodAutoscalerCheckpoint{}
	if ref.kind == hvpav1alpha1.KindHvpaCheckpoint {
		cp = &hvpav1alpha1.HvpaCheckpoint{}
	}
	cp.SetNamespace(ref.Namespace)
	cp.SetName(ref.Name)
	r.cpMu.Lock()
	mode := r.statusModes[ref.kind]
	r.cpMu.Unlock()
	if mode != statusSubresource {
		if err := r.Client.Patch(ctx, cp, client.RawPatch(types.JSONPatchType, patch)); err != nil {
			return err
		}
		if r.statusKept(ctx, ref.kind, cp, status) {
			return nil
		}
	}
	err = r.Client.Status().Patch(ctx, cp, client.RawPatch(types.JSONPatchType, patch))
	if apierrors.IsNotFound(err) {
		// deleted meanwhile, or the CRD no longer has the subresource: the next write of the kind finds out
		r.cpMu.Lock()
		r.statusModes[ref.kind] = statusUnknown
		r.cpMu.Unlock()
	}
	return err
}

// statusMode is how the checkpoints of one kind take their status: in the object (upstream's CRD, and this
// project's since it matches upstream's), or through the status subresource the CRDs of an earlier hvpa have
// (helm does not upgrade CRDs). Each write of the object checks which: the answer holds the stored status.
type statusMode int

const (
	statusUnknown     statusMode = iota // no write of the kind answered yet
	statusInObject                      // a create or patch of the object stores its status: one request
	statusSubresource                   // the CRD has a status subresource: the status is patched there, a second request
)

// statusKept says whether the answer to a create or patch of a checkpoint of kind (cp, the stored object)
// holds the status it sent, and notes how the kind takes its status.
func (r *Recommender) statusKept(ctx context.Context, kind string, cp client.Object, sent hvpav1alpha1.HvpaCheckpointStatus) bool {
	var got vpav1.VerticalPodAutoscalerCheckpointStatus
	switch c := cp.(type) {
	case *vpav1.VerticalPodAutoscalerCheckpoint:
		got = c.Status
	case *hvpav1alpha1.HvpaCheckpoint:
		got = c.Status.VerticalPodAutoscalerCheckpointStatus
		if got.LastUpdateTime.Unix() == sent.LastUpdateTime.Unix() {
			r.noteDroppedFields(ctx, cp, sent, c.Status)
		}
	}
	// stored times have whole seconds; the sample count and version tell a status from an older one
	kept := got.LastUpdateTime.Unix() == sent.LastUpdateTime.Unix() && got.TotalSamplesCount == sent.TotalSamplesCount && got.Version == sent.Version
	r.cpMu.Lock()
	defer r.cpMu.Unlock()
	r.statusModes[kind] = statusSubresource
	if kept {
		r.statusModes[kind] = statusInObject
	}
	return kept
}

// noteDroppedFields logs once a kind when a checkpoint's status was stored without the fields of the
// recurring bursts it was sent with: a CRD of an earlier version (helm does not upgrade CRDs).
func (r *Recommender) noteDroppedFields(ctx context.Context, cp client.Object, sent, stored hvpav1alpha1.HvpaCheckpointStatus) {
	log := logf.FromContext(ctx).WithValues("checkpoint", cp.GetNamespace()+"/"+cp.GetName())
	if (sent.CPUMinutes != nil || len(sent.CPUBursts) > 0) && stored.CPUMinutes == nil && len(stored.CPUBursts) == 0 && !r.dropsBursts.Swap(true) {
		log.Info("the HvpaCheckpoint CRD drops status.cpuMinutes and status.cpuBursts: recurring bursts are not anticipated after a restart until the chart's CRDs (charts/hvpa/crds) are upgraded")
	}
	if sent.CPUBurstAhead != nil && stored.CPUBurstAhead == nil && !r.dropsAhead.Swap(true) {
		log.Info("the HvpaCheckpoint CRD drops status.cpuBurstAhead: a recurring burst under way at a restart is returned from after the scale-down stabilization until the chart's CRDs (charts/hvpa/crds) are upgraded")
	}
}

// deleteOrphanCheckpoints deletes the checkpoints this recommender wrote (WriterLabel) whose VPA or Hvpa no
// longer exists; a checkpoint another recommender wrote (upstream's, or another --recommender-name) is never
// deleted here.
func (r *Recommender) deleteOrphanCheckpoints(ctx context.Context) error {
	orphans, err := r.orphanCheckpoints(ctx)
	if err != nil {
		return err
	}
	deleted := 0
	var errs []error
	for _, o := range orphans {
		if err := r.Client.Delete(ctx, o.obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", o.ref.kind, o.ref.NamespacedName, err))
			continue
		}
		delete(r.ours, o.ref)
		delete(r.replaceable, o.ref)
		delete(r.seen, o.ref)
		key := o.key
		if o.ofHvpa {
			key.vpa = hvpaOwner(key.vpa)
			r.state.DropTotals(key.ns, key.vpa)
			delete(r.legacy, key)
		}
		r.state.DropInitial(recommender.OwnerKey{Namespace: key.ns, Owner: key.vpa, Container: key.container})
		delete(r.written, key)
		deleted++
	}
	if deleted > 0 {
		logf.FromContext(ctx).Info("deleted orphaned checkpoints", "count", deleted)
	}
	return errors.Join(errs...)
}

// orphan is a checkpoint this recommender wrote whose VPA or Hvpa is gone.
type orphan struct {
	obj    client.Object
	ref    checkpointRef
	key    vpaContainer // owner as the state names it
	ofHvpa bool
}

// orphanCheckpoints lists the checkpoints this recommender wrote (WriterLabel) whose VPA or Hvpa no longer
// exists.
func (r *Recommender) orphanCheckpoints(ctx context.Context) ([]orphan, error) {
	vpas, hvpas, err := r.existing(ctx)
	if err != nil {
		return nil, err
	}
	ours := client.MatchingLabels{WriterLabel: r.Opts.Name}
	var l vpav1.VerticalPodAutoscalerCheckpointList
	if err := r.Client.List(ctx, &l, ours); err != nil {
		return nil, err
	}
	var hl hvpav1alpha1.HvpaCheckpointList
	if err := r.Client.List(ctx, &hl, ours); err != nil {
		return nil, err
	}
	var orphans []orphan
	for i := range l.Items {
		cp := &l.Items[i]
		owner := types.NamespacedName{Namespace: cp.Namespace, Name: cp.Spec.VPAObjectName}
		o := orphan{cp, checkpointRef{vpav1.KindVerticalPodAutoscalerCheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}},
			vpaContainer{cp.Namespace, cp.Spec.VPAObjectName, cp.Spec.ContainerName}, cp.Labels[OwnerKindLabel] == hvpav1alpha1.KindHvpa}
		if (!o.ofHvpa && vpas[owner]) || (o.ofHvpa && hvpas[owner]) {
			continue
		}
		orphans = append(orphans, o)
	}
	for i := range hl.Items {
		cp := &hl.Items[i]
		if hvpas[types.NamespacedName{Namespace: cp.Namespace, Name: cp.Spec.HvpaName}] {
			continue
		}
		orphans = append(orphans, orphan{cp, checkpointRef{hvpav1alpha1.KindHvpaCheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}},
			vpaContainer{cp.Namespace, cp.Spec.HvpaName, cp.Spec.ContainerName}, true})
	}
	return orphans, nil
}

// existing are the VPAs and Hvpas that exist now: only their names are read, from the cache without a copy
// of each object (client.UnsafeDisableDeepCopy).
func (r *Recommender) existing(ctx context.Context) (vpas, hvpas map[types.NamespacedName]bool, err error) {
	var vl vpav1.VerticalPodAutoscalerList
	if err := r.Client.List(ctx, &vl, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, err
	}
	vpas = map[types.NamespacedName]bool{}
	for _, v := range vl.Items {
		vpas[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = true
	}
	var hl hvpav1alpha1.HvpaList
	if err := r.Client.List(ctx, &hl, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, err
	}
	hvpas = map[types.NamespacedName]bool{}
	for _, h := range hl.Items {
		hvpas[types.NamespacedName{Namespace: h.Namespace, Name: h.Name}] = true
	}
	return vpas, hvpas, nil
}

// WriterLabel names the recommender (--recommender-name) that writes a checkpoint; its garbage collection
// deletes only the checkpoints it writes.
const WriterLabel = "autoscaling.hvpa.dev/recommender"

// OwnerKindLabel marks the VerticalPodAutoscalerCheckpoints earlier versions wrote for an Hvpa (named
// hvpa-<name>-<container>; Hvpa histories are HvpaCheckpoints now): loaded, moved at the next write, and
// orphans when their Hvpa is gone.
const OwnerKindLabel = "autoscaling.hvpa.dev/owner-kind"

// HistoryLabel says what history an Hvpa checkpoint holds; HistoryWorkloadTotal: the workload total of one
// container (docs/design/scaling.md section 2), not a per-pod history.
const (
	HistoryLabel         = "autoscaling.hvpa.dev/history"
	HistoryWorkloadTotal = "workload-total"
)
