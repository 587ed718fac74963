package vpa

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
)

// CheckpointVersion is the format version written into checkpoints.
const CheckpointVersion = "v3"

// CheckpointName is the name of the checkpoint of one container of one VPA.
func CheckpointName(vpa, container string) string { return vpa + "-" + container }

// bootstrap loads the usage history once, before the first run: checkpoints, or Prometheus; when Prometheus
// cannot be read, the checkpoints (written with either storage) and the reason are what the recommender goes
// on with.
func (r *Recommender) bootstrap(ctx context.Context) error {
	if r.Opts.Storage == StoragePrometheus {
		err := r.loadPrometheusHistory(ctx)
		if err == nil {
			r.Metrics.setHistorySource(historyPrometheus)
			return nil
		}
		log.FromContext(ctx).Error(err, "reading usage history from Prometheus failed; starting from the checkpoints instead")
		if cerr := r.loadCheckpoints(ctx); cerr != nil {
			r.Metrics.setHistorySource(historyNone)
			return errors.Join(err, cerr)
		}
		r.Metrics.setHistorySource(historyCheckpointFallback)
		return nil
	}
	if err := r.loadCheckpoints(ctx); err != nil {
		r.Metrics.setHistorySource(historyNone)
		return err
	}
	r.Metrics.setHistorySource(historyCheckpoint)
	return nil
}

// loadCheckpoints loads every checkpoint: the VPAs' per-container aggregates, the Hvpas' workload totals
// (HvpaCheckpoints, and those an earlier hvpa kept in VerticalPodAutoscalerCheckpoints).
func (r *Recommender) loadCheckpoints(ctx context.Context) error {
	logger := log.FromContext(ctx)
	var l vpav1.VerticalPodAutoscalerCheckpointList
	if err := r.Client.List(ctx, &l); err != nil {
		return fmt.Errorf("loading checkpoints: %w", err)
	}
	var hl hvpav1alpha1.HvpaCheckpointList
	if err := r.Client.List(ctx, &hl); err != nil {
		return fmt.Errorf("loading Hvpa checkpoints: %w", err)
	}
	m := r.model(r.Base)
	loaded := 0
	load := func(ref checkpointRef, owner, container string, status vpav1.VerticalPodAutoscalerCheckpointStatus, writer string, hvpa bool) {
		a, err := m.LoadAggregate(fromCheckpoint(status), r.Clock.Now())
		if err != nil {
			logger.Error(err, "skipping a checkpoint", "kind", ref.kind, "checkpoint", ref.Namespace+"/"+ref.Name)
			return
		}
		key := recommender.OwnerKey{Namespace: ref.Namespace, Owner: owner, Container: container}
		if hvpa {
			r.state.LoadTotal(m, key, a)
		} else {
			r.state.SetInitial(key, a)
		}
		r.written[vpaContainer{ref.Namespace, owner, container}] = status.LastUpdateTime.Time
		if writer == r.Opts.Name {
			r.ours[ref] = true
		}
		loaded++
	}
	for _, cp := range l.Items {
		ref := checkpointRef{kindVPACheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}}
		if cp.Labels[OwnerKindLabel] != "Hvpa" {
			load(ref, cp.Spec.VPAObjectName, cp.Spec.ContainerName, cp.Status, cp.Labels[WriterLabel], false)
			continue
		}
		// an earlier hvpa's history of an Hvpa, where upstream's garbage collection can delete it: moved to
		// an HvpaCheckpoint at its next write, then deleted
		owner := hvpaOwner(cp.Spec.VPAObjectName)
		r.legacy[vpaContainer{cp.Namespace, owner, cp.Spec.ContainerName}] = ref.NamespacedName
		if cp.Labels[HistoryLabel] == HistoryWorkloadTotal { // per-pod histories of even earlier versions start anew
			load(ref, owner, cp.Spec.ContainerName, cp.Status, cp.Labels[WriterLabel], true)
		}
	}
	for _, cp := range hl.Items { // after the legacy ones: an Hvpa's own checkpoint wins
		ref := checkpointRef{kindHvpaCheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}}
		load(ref, hvpaOwner(cp.Spec.HvpaName), cp.Spec.ContainerName, cp.Status, cp.Labels[WriterLabel], true)
	}
	logger.Info("loaded checkpoints", "count", loaded)
	return nil
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
	type job struct {
		key   vpaContainer
		owner string // object name
		kind  string // VerticalPodAutoscaler or Hvpa
		save  func(now time.Time) recommender.AggregateCheckpoint
	}
	var jobs []job
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
				jobs = append(jobs, job{vpaContainer{ns, s.vpa.Name, name}, s.vpa.Name, "VerticalPodAutoscaler", func(now time.Time) recommender.AggregateCheckpoint {
					return m.SaveAggregate(a, r.state.Feeding(ns, name, match), now)
				}})
			}
		}
	}
	for _, h := range hvpas {
		owner := hvpaOwner(h.hvpa.Name)
		r.state.Totals(h.hvpa.Namespace, owner, func(name string, t *recommender.WorkloadTotal) {
			if !t.Aggregate.IsEmpty() {
				jobs = append(jobs, job{vpaContainer{h.hvpa.Namespace, owner, name}, h.hvpa.Name, "Hvpa", t.Checkpoint})
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
	start := r.Clock.Now()
	quota := CheckpointQuota(len(jobs), r.Opts.Interval, r.Opts.CheckpointPeriod)
	written := 0
	for _, j := range jobs {
		if written >= quota || r.Clock.Now().Sub(start) > r.Opts.CheckpointBudget || ctx.Err() != nil {
			break
		}
		if last, ok := r.written[j.key]; ok && start.Sub(last) < r.Opts.CheckpointPeriod {
			break // the longest unwritten was written within the period: so were all the others
		}
		now := r.Clock.Now()
		status := CheckpointStatus(j.save(now), now)
		if err := r.saveCheckpoint(ctx, j.key.ns, j.owner, j.kind, j.key.container, status); err != nil {
			if ctx.Err() != nil {
				break // shutdown: the checkpoint is written by the next leader, not an error
			}
			log.FromContext(ctx).Error(err, "writing checkpoint", "vpa", j.key.ns+"/"+j.key.vpa, "container", j.key.container)
			continue
		}
		r.written[j.key] = now
		written++
	}
	r.Metrics.CheckpointsWritten.Add(float64(written))
	return written
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
	kind string // kindVPACheckpoint or kindHvpaCheckpoint
	types.NamespacedName
}

const (
	kindVPACheckpoint  = "VerticalPodAutoscalerCheckpoint"
	kindHvpaCheckpoint = "HvpaCheckpoint"
)

// saveCheckpoint writes the checkpoint of one container of a VPA (a VerticalPodAutoscalerCheckpoint) or of
// an Hvpa (an HvpaCheckpoint: upstream's garbage collection deletes every VerticalPodAutoscalerCheckpoint
// that names no VPA). An Hvpa's history an earlier hvpa kept in a VerticalPodAutoscalerCheckpoint is deleted
// once its HvpaCheckpoint is written.
func (r *Recommender) saveCheckpoint(ctx context.Context, ns, owner, kind, container string, status vpav1.VerticalPodAutoscalerCheckpointStatus) error {
	name := CheckpointName(owner, container)
	if kind != "Hvpa" {
		return saveCheckpointAs(ctx, r, checkpointRef{kindVPACheckpoint, types.NamespacedName{Namespace: ns, Name: name}}, status,
			&vpav1.VerticalPodAutoscalerCheckpoint{}, func(cp *vpav1.VerticalPodAutoscalerCheckpoint) (string, string) {
				if cp.Labels[OwnerKindLabel] == "Hvpa" {
					return hvpaOwner(cp.Spec.VPAObjectName), cp.Spec.ContainerName
				}
				return cp.Spec.VPAObjectName, cp.Spec.ContainerName
			}, owner, container, func() *vpav1.VerticalPodAutoscalerCheckpoint {
				return &vpav1.VerticalPodAutoscalerCheckpoint{Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: owner, ContainerName: container}}
			})
	}
	err := saveCheckpointAs(ctx, r, checkpointRef{kindHvpaCheckpoint, types.NamespacedName{Namespace: ns, Name: name}}, status,
		&hvpav1alpha1.HvpaCheckpoint{}, func(cp *hvpav1alpha1.HvpaCheckpoint) (string, string) { return cp.Spec.HvpaName, cp.Spec.ContainerName },
		owner, container, func() *hvpav1alpha1.HvpaCheckpoint {
			return &hvpav1alpha1.HvpaCheckpoint{Spec: hvpav1alpha1.HvpaCheckpointSpec{HvpaName: owner, ContainerName: container}}
		})
	key := vpaContainer{ns, hvpaOwner(owner), container}
	if old, ok := r.legacy[key]; err == nil && ok {
		cp := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: old.Namespace, Name: old.Name}}
		if derr := r.Client.Delete(ctx, cp); derr != nil && !apierrors.IsNotFound(derr) {
			return fmt.Errorf("deleting %s/%s, moved to an HvpaCheckpoint: %w", old.Namespace, old.Name, derr)
		}
		delete(r.legacy, key)
		delete(r.ours, checkpointRef{kindVPACheckpoint, old})
	}
	return err
}

// saveCheckpointAs writes status into the checkpoint ref (of type T), creating it (fresh) when it is missing,
// refusing one that belongs to another owner (names collide), and labelling one another recommender wrote
// as this one's.
func saveCheckpointAs[T client.Object](ctx context.Context, r *Recommender, ref checkpointRef, status vpav1.VerticalPodAutoscalerCheckpointStatus,
	cp T, ownerOf func(T) (string, string), owner, container string, fresh func() T) error {
	if r.ours[ref] {
		// this recommender's own checkpoint (loaded at start or written since): its status replaced in one
		// request, no read first (checkpoints are not cached: a list at start and at each garbage collection)
		err := r.replaceCheckpointStatus(ctx, ref, status)
		if !apierrors.IsNotFound(err) {
			return err
		}
		delete(r.ours, ref) // deleted meanwhile: created again below
	}
	err := r.Client.Get(ctx, ref.NamespacedName, cp)
	switch {
	case apierrors.IsNotFound(err):
		cp = fresh()
		cp.SetNamespace(ref.Namespace)
		cp.SetName(ref.Name)
		cp.SetLabels(map[string]string{WriterLabel: r.Opts.Name})
		if err := r.Client.Create(ctx, cp); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if o, c := ownerOf(cp); o != owner || c != container {
			return fmt.Errorf("%s %s belongs to %s container %s, not to %s container %s: the names collide; rename one of the objects",
				ref.kind, ref.Name, o, c, owner, container)
		}
		if lbls := cp.GetLabels(); lbls[WriterLabel] != r.Opts.Name {
			// written by another recommender serving this object before (an earlier hvpa, or upstream's): this
			// one writes it now, so its garbage collection may delete it once its owner is gone
			if lbls == nil {
				lbls = map[string]string{}
			}
			lbls[WriterLabel] = r.Opts.Name
			cp.SetLabels(lbls)
			if err := r.Client.Update(ctx, cp); err != nil {
				return err
			}
		}
	}
	if err := r.replaceCheckpointStatus(ctx, ref, status); err != nil {
		return err
	}
	r.ours[ref] = true
	return nil
}

// replaceCheckpointStatus replaces a checkpoint's whole status (a JSON patch: "add" replaces the member, so
// that histogram buckets the new status no longer has are gone, which a merge patch would keep).
func (r *Recommender) replaceCheckpointStatus(ctx context.Context, ref checkpointRef, status vpav1.VerticalPodAutoscalerCheckpointStatus) error {
	patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": status}})
	if err != nil {
		return err
	}
	var cp client.Object = &vpav1.VerticalPodAutoscalerCheckpoint{}
	if ref.kind == kindHvpaCheckpoint {
		cp = &hvpav1alpha1.HvpaCheckpoint{}
	}
	cp.SetNamespace(ref.Namespace)
	cp.SetName(ref.Name)
	return r.Client.Status().Patch(ctx, cp, client.RawPatch(types.JSONPatchType, patch))
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
		log.FromContext(ctx).Info("deleted orphaned checkpoints", "count", deleted)
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
		o := orphan{cp, checkpointRef{kindVPACheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}},
			vpaContainer{cp.Namespace, cp.Spec.VPAObjectName, cp.Spec.ContainerName}, cp.Labels[OwnerKindLabel] == "Hvpa"}
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
		orphans = append(orphans, orphan{cp, checkpointRef{kindHvpaCheckpoint, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}},
			vpaContainer{cp.Namespace, cp.Spec.HvpaName, cp.Spec.ContainerName}, true})
	}
	return orphans, nil
}

// existing are the VPAs and Hvpas that exist now.
func (r *Recommender) existing(ctx context.Context) (vpas, hvpas map[types.NamespacedName]bool, err error) {
	var vl vpav1.VerticalPodAutoscalerList
	if err := r.Client.List(ctx, &vl); err != nil {
		return nil, nil, err
	}
	vpas = map[types.NamespacedName]bool{}
	for _, v := range vl.Items {
		vpas[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = true
	}
	var hl hvpav1alpha1.HvpaList
	if err := r.Client.List(ctx, &hl); err != nil {
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
