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
// Every candidate's target is applied as an updater with the dead band (10%) would apply it, and every
// sample is scored against that applied target. With sums that decay with Config.ScoreHalfLife (12h),
//
//	cost = Over x over + Idle x idle + Change x changes/day + OOM x ooms/day
//
// where over is the share of samples above the target, idle the mean of max(target - usage, 0) / target,
// changes/day the applied changes a day of the candidate's own target, and ooms/day the OOM kills it would
// not have prevented (its target was not above the memory in use) a day. The default weights: Over 15 for
// CPU and 100 for memory, OOM 200, Idle 1, Change 0.01: an overrun costs most, an OOM more still, then idle
// capacity, then changes.
//
// # Selection and publication
//
// Every Refresh after Config.Warmup (24h; upstream wins before), the cheapest CPU and the cheapest memory
// candidate win, but a winner is only replaced by a challenger that costs Hysteresis (10%) less. The
// published target is the winner's applied target, made a recommendation as upstream's are (pod minimum,
// policy caps, rounding; bounds are upstream's widened to hold the target). A rise is published at once; a
// change that lowers a target waits for a budget of ChangesPerDay/3 a day; memory that must rise (an OOM
// floor, usage within MemoryGuard of the target) never waits. With upstream as the only candidate and
// ChangesPerDay 0 (UpstreamOnly), the published recommendation is upstream's, number for number.
//
// # Size and speed
//
// A State is fixed in size when it is made: the decaying histograms (CPU buckets x half-lives), a ring of
// hour slots (8 days), the candidates (about 50 for CPU, 10 for memory) and their schedules: about 12 KiB.
// Adding a sample allocates nothing (BenchmarkAdaptive).
package adaptive
