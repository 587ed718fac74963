// Package recommender is hvpa's own implementation of the VPA usage model, as pure code (no clients, no
// clock): exponential-bucket histograms with exponential decay, per-window memory peaks with the OOM bump-up,
// percentile estimators with a safety margin and confidence-widened bounds, and the checkpoint codec. With
// the same input it gives the numbers the upstream VPA recommender gives (Defaults), while storing only the
// buckets a container actually uses.
//
// The model, with its defaults (Config):
//   - Histograms: exponential buckets, CPU from 0.01 core by x1.05 up to 1000 cores, memory from 1e7 bytes by
//     x1.05 up to 1e12 bytes (176 buckets each), epsilon 1e-4. A percentile is the END of the bucket where the
//     cumulative weight reaches p x total (the start for the last bucket); no interpolation.
//   - Decay: a sample at t weighs weight x 2^((t - reference) / 24h); past 100 half-lives the reference moves
//     to a whole multiple of the half-life and the weights are rescaled.
//   - CPU: every sample weighs 0.1 (not weighted by the request); a sample must be newer than the container's
//     last CPU sample; CPU samples set the first/last sample time and the count (the confidence).
//   - Memory: one peak per pod container per 24h window, kept for 8 windows, weight 1 at the window end, raised
//     when a larger sample arrives in the window.
//   - OOM: needed = max(used + 100Mi, used x 1.2), used = max(request at the OOM, window usage peak); a peak
//     that later smaller OOMs do not lower; an OOM older than one interval before the last memory sample is
//     rejected.
//   - Estimates: target P90 x 1.15; lower bound P50 x 1.15 x (1 + 0.001/c)^-2; upper bound P95 x 1.15 x
//     (1 + 1/c), c = min(sample span in days, samples / 1440); each at least the pod minimum (25m, 250Mi)
//     split evenly across the pod's containers (whole millicores and bytes, rounded down).
//   - Recommendation: uncappedTarget is the target before the container policy; then minAllowed/maxAllowed
//     cap target and bounds, uncontrolled resources are left out, mode Off gives none; everything is rounded
//     up to whole millicores and bytes, at most 1e14 ("no upper bound yet").
//   - Checkpoints: bucket weights scaled so that the largest is 10000 (zero buckets dropped), the total
//     weight and reference time kept; loading rescales by total / sum.
//
// Per-object overrides: annotations under recommender.hvpa.dev/ on a VerticalPodAutoscaler or Hvpa set the
// OOM bump-up ratio and minimum, the memory aggregation interval and count, the target percentile and the
// safety margin (WithOverrides parses and validates them; Config.Validate checks every parameter).
package recommender
