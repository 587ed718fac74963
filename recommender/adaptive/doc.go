// Package adaptive is the opt-in "adaptive" recommender model (issue 20): an ensemble of estimators over the
// same usage samples, scored continuously on the recent past, whose winner's target is published.
//
// It is pure (it imports only package recommender and the standard library) and sits beside the upstream
// model: the caller keeps running upstream's model as it does (its numbers do not change) and hands its
// recommendation to State.Recommend, where it is one of the candidates. A model is chosen per object with
// the annotation recommender.hvpa.dev/model (AnnotationModel: "upstream", the default, or "adaptive").
//
// # Candidates
//
// CPU (millicores), every Config.Refresh:
//   - "upstream": the upstream model's target (p90 of a 24h-half-life histogram + 15%);
//   - "pP-mM-hH": the P-th percentile of a decaying histogram of the samples with half-life H hours, plus
//     M% (every half-life x percentile x margin; the histograms share their buckets with upstream's);
//   - "daily-dD-zZ-sS-mM": a daily curve. Per hour of the day, the largest mean + Z x sd of that hour over
//     the last D days gives a profile; the profile becomes a schedule of at most S levels over the day
//     (contiguous runs of hours, each at the largest profile value of its run, chosen to minimize the idle
//     share), so that following it costs at most S changes a day. The target is the largest level from now
//     to now + Lead, never below what the current and the previous hour need (mean + Z x sd), plus M%.
//
// Memory (bytes): "upstream" (upstream's peaks histogram and OOM bumps), and "peak-wWh-mM": the largest
// hourly peak of the last W hours plus M%. OOM kills are peaks (bumped as upstream bumps them: max(request +
// 100Mi, 1.2 x request) by default), and no memory candidate goes below the bump of an OOM of the last
// Config.OOMHold.
//
// # Cost
//
// Every candidate's target is applied as the publication applies the winner's (below): with the dead band
// (10%), a rise at once, a cut only with a change left in the budget. Every sample is scored against that
// applied target, in sums that decay with Config.ScoreHalfLife (12h): over, the share of samples above the
// target; idle, the mean of max(target - usage, 0) / target; changes/day, the candidate's applied changes a
// day; ooms, the OOM kills it would not have prevented (its target was not above the memory in use).
//
// The cost is lexicographic, in the order of the goals: OOMs first, then overruns, then idle capacity, then
// changes. OOMs and overruns are constraints; a candidate is eligible when
//
//	ooms <= upstream's ooms (memory)   and   over <= limit
//	limit = min(max(T x up + Gain x (T x up - published), 0), 2 x up)
//
// where up and published are the long-run over shares (sums decaying with Config.LedgerHalfLife, 7 days)
// of upstream's applied target and of the published one, T the tolerance (Weights.Over 0.8 for CPU,
// Weights.MemoryOver 0.8 for memory: a margin below upstream's) and Gain 1: when the published target ran
// over less than T x upstream's, the limit rises, when more, it falls. Upstream is always eligible, so the
// model chooses it rather than run over more than it. Among the eligible candidates the cost is
//
//	cost = Idle x idle + Change x changes/day
//
// (Idle 1, Change 0.01).
//
// # Selection and publication
//
// Every Refresh after Config.Warmup (24h; upstream wins before), the cheapest eligible CPU and memory
// candidates win; a winner that is still eligible is only replaced by a challenger that costs Hysteresis
// (10%) less. The published target is the winner's applied target, made a recommendation as upstream's are
// (pod minimum, policy caps, rounding; bounds are upstream's widened to hold the target). A rise is
// published at once; a change that lowers a target waits for the budget: ChangesPerDay (3) a day, or
// upstream's own applied changes a day since the warmup when that is higher (upstream's target as an
// updater with the dead band applies it, counted once a day of them has passed), refilled continuously, at
// most ChangesPerDay/3 saved; a rise takes one too, and when none is left the budget owes it (the cuts wait
// until it is paid back), so targets change at most about that often. Memory that must rise (an OOM floor,
// usage within MemoryGuard of the target) never waits, and before the warmup a rise of upstream's memory
// target is published even within the dead band. With upstream as the only candidate and ChangesPerDay 0
// (UpstreamOnly), the published recommendation is upstream's, number for number.
//
// # Size and speed
//
// A State is fixed in size when it is made: the decaying histograms (CPU buckets x half-lives), a ring of
// hour slots (8 days), the candidates (about 50 for CPU, 10 for memory) and their schedules: about 12 KiB.
// Adding a sample allocates nothing (BenchmarkAdaptive).
package adaptive
