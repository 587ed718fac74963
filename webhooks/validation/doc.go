// Package validation is the object-validation admission logic for VerticalPodAutoscaler
// (autoscaling.k8s.io/v1) and Hvpa (autoscaling.k8s.io/v1alpha1): the rules the CRD schema and its CEL
// rules cannot express. VPA and Hvpa are pure functions returning a field.ErrorList with precise paths (and,
// for Hvpa, admission warnings); VPAValidator and HvpaValidator adapt them to controller-runtime's
// admission.Validator and return apierrors.NewInvalid, so the API server shows every path. DELETE is always
// allowed.
//
// The API server runs the schema (and CEL) before the webhook, so the webhook only sees objects that passed
// it. A few schema rules are repeated (noted below) so that a caller of the pure functions, and an object
// stored before a rule existed, get the same answer.
//
// # Updates
//
//   - An UPDATE that leaves the spec unchanged (metadata, finalizers) is always accepted, without warnings:
//     an object accepted once, or stored before the webhook existed, stays deletable and labelable.
//   - A gated field whose gate is off is refused on CREATE and when an UPDATE adds or changes it; an UPDATE
//     that keeps it unchanged is accepted with a warning that it is ignored (the upstream VPA ratchet).
//     Upstream's wider ratchets are followed: a VPA that has any startupBoost (its own or a container
//     policy's) may keep, change and add boosts with CPUStartupBoost off, and one that uses a PerVPAConfig
//     field may use the others. A startupBoost quantity is whole millicores (upstream).
//   - A containerName that the old object already had is not checked for its form again.
//
// # VerticalPodAutoscaler (paths under spec)
//
//   - targetRef: required; kind and name required; apiVersion must parse as group/version; the kinds that
//     own no pods are refused (HorizontalPodAutoscaler, VerticalPodAutoscaler, Hvpa, ControllerRevision).
//   - updatePolicy.updateMode: one of Off, Initial, Recreate, Auto, InPlaceOrRecreate, InPlace (schema
//     enum, repeated); InPlace needs feature gate InPlace; required when updatePolicy is set (upstream; an
//     update of an object stored without it keeps it, with a warning); Auto is deprecated (upstream's
//     warning).
//   - updatePolicy.minReplicas: positive (schema minimum, repeated; upstream message).
//   - recommenders: at most one (upstream message).
//
// Container policies, resourcePolicy.containerPolicies[i] (also for an Hvpa's
// spec.vpa.template.resourcePolicy):
//
//   - containerName: required (upstream); "*" or a DNS-1123 label (a container name; patterns such as
//     "app-*" are refused); unique among the policies (also "*"; upstream accepts duplicates, the first
//     named one applying, the last "*": an update keeps a duplicate the old object had, with a warning).
//   - controlledResources: cpu and memory only (upstream; one the old object named is kept, with a warning).
//   - mode: Auto or Off (schema enum, repeated).
//   - minAllowed, maxAllowed: not negative; cpu in whole millicores, memory in whole bytes (upstream);
//     maxAllowed not below minAllowed, for every resource, reported on maxAllowed (upstream message).
//   - controlledValues: RequestsAndLimits or RequestsOnly (schema enum, repeated); RequestsAndLimits with
//     mode Off is refused (upstream refuses exactly this pair; RequestsOnly with mode Off stays allowed).
//   - requestToLimitRatio (AEP-8515): needs feature gate RequestToLimitRatio; needs controlledValues
//     RequestsAndLimits (CEL rule, repeated); each resource it names must be in controlledResources when
//     that is set (CEL rule, repeated).
//   - requestToLimitRatio.{cpu,memory}: type Factor or Quantity; Factor needs factor >= 1 and no quantity;
//     Quantity needs quantity >= 0 (cpu in whole millicores, memory in whole bytes) and no factor. (A
//     quantity that does not parse never reaches the webhook: decoding refuses it.)
//
// # Hvpa (paths under spec)
//
//   - targetRef: kind and name required; apiVersion must parse; kinds without a scale subresource are
//     refused: DaemonSet (apps, extensions), Job and CronJob (batch), Pod, ControllerRevision, and the
//     autoscalers HorizontalPodAutoscaler, VerticalPodAutoscaler and Hvpa. With apiVersion unset the kind is
//     matched in any group. Deployment, StatefulSet, ReplicaSet, ReplicationController and every other
//     kind are accepted: whether a custom kind serves /scale needs the API (the controller reports
//     NoScaleSubresource).
//   - vpa.template.resourcePolicy: the container-policy rules above.
//   - Everything scaling.FromHvpa refuses (the controller's own conversion), among them: the first interval
//     must reach hpa.template.minReplicas; maxReplicas strictly increasing; maxResources not decreasing
//     after defaulting; only the last interval may omit maxReplicas; updateMode MaintenanceWindow needs
//     maintenanceTimeWindow and the window must parse; change parameters in range. Its errors about a
//     container policy that the rules above already reported are dropped (no double report).
//   - scalingIntervals[i].maxReplicas: not above hpa.template.maxReplicas (the workload never gets there).
//     A last interval below it is only a warning.
//   - scalingIntervals[i].maxResources.{cpu,memory}: greater than 0; not above the largest maxAllowed of
//     the container policies that scale the resource (mode not Off, resource controlled), when that set
//     is complete (there is a "*" policy) and every one of them has a maxAllowed for the resource; a
//     single policy capped below is only a warning.
//   - scalingIntervalsOverlap.{cpu,memory}.value / .percentage: every down boundary after the first
//     effective interval (scaling.EffectiveIntervals, as the controller computes them) must be above 0;
//     an overlap as large as the previous upper total makes it 0 and the workload would never scale down.
//   - scalingIntervals[i].effectiveIntervalExtrapolation: at most 1000 effective intervals in all (scaling.MaxEffectiveIntervals; the CRD bounds maxReplicas of extrapolated intervals to 1000)
//     (linear and horizontalOnly make one per replica count).
//
// # Hvpa warnings
//
//   - hpa.deploy with hpa.template.behavior.scaleDown.stabilizationWindowSeconds > 0 (ratchets totals up).
//   - hpa.deploy with a metric that is not a Resource metric with a Utilization target (replica floor only).
//   - scaleDown with updateMode Auto (also when unset) and no or a zero stabilizationDuration.
//   - neither hpa.deploy nor vpa.deploy.
//   - the last interval's explicit maxReplicas below hpa.template.maxReplicas.
//   - a container policy whose maxAllowed is below an interval's maxResources (once per policy and resource).
//   - a gated field kept by an update while its gate is off (also for VPAs, through VPAValidator).
package validation
