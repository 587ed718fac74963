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

// bootstrap loads the usage history once, before the first run: checkpoints, or Prometheus.
func (r *Recommender) bootstrap(ctx context.Context) error {
	logger := log.FromContext(ctx)
	switch r.Opts.Storage {
	case StorageCheckpoint:
		var l vpav1.VerticalPodAutoscalerCheckpointList
		if err := r.Client.List(ctx, &l); err != nil {
			return fmt.Errorf("loading checkpoints: %w", err)
		}
		m := r.model(r.Base)
		loaded := 0
		for _, cp := range l.Items {
			owner := cp.Spec.VPAObjectName
			isHvpa := cp.Labels[OwnerKindLabel] == "Hvpa"
			if isHvpa && cp.Labels[HistoryLabel] != HistoryWorkloadTotal {
				continue // a per-pod history of an earlier version: the workload total starts anew
			}
			a, err := m.LoadAggregate(fromCheckpoint(cp.Status), r.Clock.Now())
			if err != nil {
				logger.Error(err, "skipping a checkpoint", "checkpoint", cp.Namespace+"/"+cp.Name)
				continue
			}
			if isHvpa {
				owner = hvpaOwner(owner)
				r.state.LoadTotal(m, recommender.OwnerKey{Namespace: cp.Namespace, Owner: owner, Container: cp.Spec.ContainerName}, a)
			} else {
				r.state.SetInitial(recommender.OwnerKey{Namespace: cp.Namespace, Owner: owner, Container: cp.Spec.ContainerName}, a)
			}
			r.written[vpaContainer{cp.Namespace, owner, cp.Spec.ContainerName}] = cp.Status.LastUpdateTime.Time
			if cp.Labels[WriterLabel] == r.Opts.Name {
				r.ours[types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name}] = true
			}
			loaded++
		}
		logger.Info("loaded checkpoints", "count", loaded)
	case StoragePrometheus:
		history, err := r.History.History(ctx)
		if err != nil {
			return fmt.Errorf("reading usage history from Prometheus: %w", err)
		}
		// labels of live pods, for history without pod labels (kube-state-metrics v2 exports none by default)
		pods, err := r.Pods.List(ctx, metav1.NamespaceAll)
		if err != nil {
			return err
		}
		live := map[types.NamespacedName]map[string]string{}
		for _, p := range pods {
			live[p.Key()] = p.Labels
		}
		m := r.model(r.Base)
		skipped := 0
		for _, h := range history {
			lbl := h.Labels
			if len(lbl) == 0 {
				lbl = live[types.NamespacedName{Namespace: h.Namespace, Name: h.Pod}]
			}
			if len(lbl) == 0 { // neither Prometheus nor the cluster knows the pod's labels: no VPA could select it
				skipped++
				continue
			}
			c := r.state.HistoryContainer(m, recommender.AggregateKey{Namespace: h.Namespace, Container: h.Container, Group: recommender.LabelKey(lbl)}, lbl)
			for _, s := range h.CPU {
				m.AddCPU(c, s.Time, s.Value)
			}
			for _, s := range h.Memory {
				m.AddMemory(c, s.Time, s.Value)
			}
		}
		logger.Info("loaded usage history from Prometheus", "containers", len(history)-skipped, "withoutLabels", skipped)
	}
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

func (r *Recommender) saveCheckpoint(ctx context.Context, ns, owner, kind, container string, status vpav1.VerticalPodAutoscalerCheckpointStatus) error {
	cp := &vpav1.VerticalPodAutoscalerCheckpoint{}
	name := CheckpointName(owner, container)
	lbls := map[string]string{WriterLabel: r.Opts.Name}
	if kind == "Hvpa" {
		name = "hvpa-" + name
		lbls[OwnerKindLabel], lbls[HistoryLabel] = "Hvpa", HistoryWorkloadTotal
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	if r.ours[key] {
		// this recommender's own checkpoint (loaded at start or written since): its status replaced in one
		// request, no read first (checkpoints are not cached: a list at start and at each garbage collection)
		err := r.replaceCheckpointStatus(ctx, key, status)
		if !apierrors.IsNotFound(err) {
			return err
		}
		delete(r.ours, key) // deleted meanwhile: created again below
	}
	err := r.Client.Get(ctx, key, cp)
	switch {
	case apierrors.IsNotFound(err):
		cp = &vpav1.VerticalPodAutoscalerCheckpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: lbls},
			Spec:       vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: owner, ContainerName: container},
		}
		if err := r.Client.Create(ctx, cp); err != nil {
			return err
		}
	case err != nil:
		return err
	case kind == "Hvpa" && cp.Labels[HistoryLabel] != HistoryWorkloadTotal && cp.Spec.VPAObjectName == owner && cp.Spec.ContainerName == container:
		cp.Labels = lbls // an earlier version's per-pod history of this Hvpa: replaced by the workload total
		if err := r.Client.Update(ctx, cp); err != nil {
			return err
		}
	case cp.Spec.VPAObjectName != owner || cp.Spec.ContainerName != container || (cp.Labels[OwnerKindLabel] == "Hvpa") != (kind == "Hvpa"):
		return fmt.Errorf("checkpoint %s belongs to %s/%s (%s), not to %s %s container %s: the names collide; rename one of the objects",
			name, cp.Spec.VPAObjectName, cp.Spec.ContainerName, cp.Labels[OwnerKindLabel], kind, owner, container)
	case cp.Labels[WriterLabel] != r.Opts.Name:
		// written by another recommender serving this VPA before (an earlier hvpa, or upstream's): this one
		// writes it now, so its garbage collection may delete it once its VPA is gone
		if cp.Labels == nil {
			cp.Labels = map[string]string{}
		}
		cp.Labels[WriterLabel] = r.Opts.Name
		if err := r.Client.Update(ctx, cp); err != nil {
			return err
		}
	}
	patched := cp.DeepCopy()
	patched.Status = status
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFrom(cp)); err != nil {
		return err
	}
	r.ours[key] = true
	return nil
}

// replaceCheckpointStatus replaces a checkpoint's whole status (a JSON patch: "add" replaces the member, so
// that histogram buckets the new status no longer has are gone, which a merge patch would keep).
func (r *Recommender) replaceCheckpointStatus(ctx context.Context, key types.NamespacedName, status vpav1.VerticalPodAutoscalerCheckpointStatus) error {
	patch, err := json.Marshal([]map[string]any{{"op": "add", "path": "/status", "value": status}})
	if err != nil {
		return err
	}
	cp := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	return r.Client.Status().Patch(ctx, cp, client.RawPatch(types.JSONPatchType, patch))
}

// deleteOrphanCheckpoints deletes the checkpoints this recommender wrote (WriterLabel) whose VPA or Hvpa no
// longer exists; a checkpoint another recommender wrote (upstream's, or another --recommender-name) is never
// deleted here.
func (r *Recommender) deleteOrphanCheckpoints(ctx context.Context, vpas []vpav1.VerticalPodAutoscaler) error {
	var all vpav1.VerticalPodAutoscalerList
	if err := r.Client.List(ctx, &all); err != nil {
		return err
	}
	exists := map[types.NamespacedName]bool{}
	for _, v := range all.Items {
		exists[types.NamespacedName{Namespace: v.Namespace, Name: v.Name}] = true
	}
	var hvpas hvpav1alpha1.HvpaList
	if err := r.Client.List(ctx, &hvpas); err != nil {
		return err
	}
	hvpaExists := map[types.NamespacedName]bool{}
	for _, h := range hvpas.Items {
		hvpaExists[types.NamespacedName{Namespace: h.Namespace, Name: h.Name}] = true
	}
	var l vpav1.VerticalPodAutoscalerCheckpointList
	if err := r.Client.List(ctx, &l, client.MatchingLabels{WriterLabel: r.Opts.Name}); err != nil {
		return err
	}
	deleted := 0
	var errs []error
	for i := range l.Items {
		cp := &l.Items[i]
		owner := types.NamespacedName{Namespace: cp.Namespace, Name: cp.Spec.VPAObjectName}
		isHvpa := cp.Labels[OwnerKindLabel] == "Hvpa"
		if (!isHvpa && exists[owner]) || (isHvpa && hvpaExists[owner]) {
			continue
		}
		if err := r.Client.Delete(ctx, cp); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s/%s: %w", cp.Namespace, cp.Name, err))
			continue
		}
		delete(r.ours, types.NamespacedName{Namespace: cp.Namespace, Name: cp.Name})
		key := vpaContainer{cp.Namespace, cp.Spec.VPAObjectName, cp.Spec.ContainerName}
		if isHvpa {
			key.vpa = hvpaOwner(key.vpa)
			r.state.DropTotals(key.ns, key.vpa)
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

// WriterLabel names the recommender (--recommender-name) that writes a checkpoint; its garbage collection
// deletes only the checkpoints it writes.
const WriterLabel = "autoscaling.hvpa.dev/recommender"

// OwnerKindLabel marks checkpoints written for an Hvpa (named hvpa-<name>-<container>): they are orphans when
// their Hvpa is gone.
const OwnerKindLabel = "autoscaling.hvpa.dev/owner-kind"

// HistoryLabel says what history an Hvpa checkpoint holds; HistoryWorkloadTotal: the workload total of one
// container (SCALING.md section 2), not a per-pod history.
const (
	HistoryLabel         = "autoscaling.hvpa.dev/history"
	HistoryWorkloadTotal = "workload-total"
)
