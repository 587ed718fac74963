// Package scaling is the Hvpa decision as pure functions over plain values: effective scaling intervals,
// totals per container and resource, desired replicas, per-pod values, limits and gating. It implements
// docs/design/scaling.md (the contract; section numbers below refer to it). It takes a `now` and never
// reads a clock, and it imports no client: the Hvpa controller, the admission webhook, the updater and the
// `hvpa intervals` / `hvpa decide` tools all call the same functions.
//
// Amounts are float64 in base units (millicores for CPU, bytes for memory); per-pod results are rounded up
// to a whole millicore or byte (RoundUp forgives float noise below 1e-12 relative).
//
// # Choices where docs/design/scaling.md is silent
//
//   - Defaults (FromHvpa): maxResources of an interval defaults, per resource, to the largest maxAllowed of the
//     VPA template's container policies; a resource with neither is unbounded in that interval (it never
//     pushes the workload to another interval). Only the last interval may omit maxReplicas (defaulted from
//     hpa.template.maxReplicas). Without spec.hpa, maxReplicas is the last interval's and minReplicas is 1.
//     No HPA metrics means the HPA default (80% CPU Utilization), so the HPA total rule applies.
//   - Non-decreasing maxResources is checked after defaulting (a defaulted value may not undercut an earlier
//     interval; an unbounded resource may not be followed by a bounded one). The first interval must reach
//     minReplicas.
//   - The VPA total of a resource comes from the replica-aware load (Recommendation.Load, T = L + c x
//     base(p_current), Spec.VPATotal) when the recommendation has one for it; otherwise from the per-pod model
//     (c x uncappedTarget). A recommendation without an uncappedTarget for a resource (as older recommenders
//     write) falls back to its target for the VPA total. A container without a current request has
//     base(0), the base's value.
//   - The HPA counts as at its bounds (HPAInput.Pinned) when its desired replicas are >= the template's
//     maxReplicas or <= its minReplicas (0: unknown, never pinned) and h_raw is known (> 0), with Utilization
//     metrics only. The HPA total is then h_raw x the current per-pod value, which is also the basis recorded;
//     HPARaw reads h_raw from the HPA's status (no template metrics: the default 80% cpu), with the current
//     utilization taken as the metric's averageValue over the pod's requests in force when both are known:
//     the HPA's own averageUtilization refers to the running pods' requests, which lag the intent until the
//     pods are resized, and h_raw x the values in force would then move the intent again on every decision.
//   - LowConfidence holds a VPA-source total at no fewer than min(c, maxReplicas) replicas; Total.Replicas
//     keeps what the total asked for, DesiredReplicas includes the hold. The blocked part says replicas c ->
//     the count the totals would have given. A per-pod part that goes down while its total comes from the VPA
//     source is held too (reason LowConfidence, after the policy gates): "a scale-down from low-confidence
//     history is blocked" (issue 13), as upstream's updater leaves a pod alone while its request is inside
//     the wide bounds of a young recommendation. Without it, minutes of history shrank a 1-replica start to
//     its first samples and the next step OOM-killed it (closedloop: wl-0 8 kills against 2).
//   - After an OOM kill since the last scaling (State.OOMSinceLastScaling), a scale-out (d > c) gives each
//     pod at least T / c of a VPA-source memory total, on top of section 4's max(p_current, adj): the kill
//     says what ONE pod needed, and adj would spread the bump over pods added for another resource (the
//     pods then kept their size and were killed again; on step demand 5x above the pods this halves the
//     kills of the total model, 101 -> 67 over 16 step traces).
//   - A maintenance window whose begin equals its end (after converting both to UTC) is refused: empty and
//     whole-day are both plausible readings. Begin is inclusive, end exclusive.
//   - Current replicas that are no effective interval's replica count (e.g. 7 with no extrapolation on 2 and
//     5) are treated as a scale-up from 0 (section 3): the first interval that holds the total.
//   - A workload at 0 replicas is never scaled (ScalingActive False, ScalingDisabled), like the HPA.
//   - Without any total and without an HPA floor, the replica count stays as it is (no input, no change).
//   - The per-pod maximum for a replica count that is no interval's (after clamping to min/max or the HPA
//     floor) is that of the first interval with at least that many replicas (else the last). minAllowed
//     raises a value before maxAllowed and the interval maximum cap it: the caps win. Values are rounded up
//     (section 4), except capped ones, which round down so that they stay within their cap (otherwise an HPA
//     basis of a rounded-up cap could push the total past the interval).
//   - A container without a total for a resource keeps its current request for it.
//   - Gating order: updateMode (Off, MaintenanceWindow), then stabilization, then minChange; the first that
//     blocks is the reason reported. minChange applies to (container, resource) parts only, never to the
//     replica part. A per-pod part whose total does not change (replicas changed the other way) takes the
//     direction of its per-pod change.
//   - Saturation (a total above the top interval, or replicas above maxReplicas) is reported as a blocked
//     part with reason Saturated and sets ScalingLimited; so do caps by maxAllowed or an interval maximum.
//   - Limits (section 6) change only with an applied request change of a controlled resource (a blocked
//     change keeps its limits too). No limit stays no limit (also with limitsRequestsGapScaleParams); a limit
//     without a request counts as request = limit. RequestsOnly never changes a limit: a request above it is
//     capped to it (a request above its limit is an invalid pod) and a LimitRange bounds the request alone.
//     LimitRange container bounds: min is applied before max and max wins; a container without a limit has
//     its request bounded. A LimitRange's pod bounds apply to the pod's request and limit sums as the API
//     server's LimitRanger computes them (app containers and sidecars summed, an init container with the
//     sidecars started before it, the larger): the pod min raises the scaled containers (within their
//     container max), the pod max lowers them by one factor (max wins), the pod maxLimitRequestRatio raises
//     their requests; unscaled containers, init containers, sidecars and RequestsOnly limits count as they
//     are (ApplyPodLimitRange; sums rounded toward the bound; a request never ends above its limit).
package scaling
