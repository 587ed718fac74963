package v1

// The rules of an update mode, in one place for the recommender, the admission webhook and the updater.

// EffectiveUpdateMode is spec.updatePolicy.updateMode, or Auto where it is unset (upstream's default).
func (o *VerticalPodAutoscaler) EffectiveUpdateMode() UpdateMode {
	return o.Spec.UpdatePolicy.Mode(UpdateModeAuto)
}

// Mode is the policy's updateMode, or def where the policy or its mode is unset.
func (p *PodUpdatePolicy) Mode(def UpdateMode) UpdateMode {
	if p != nil && p.UpdateMode != nil {
		return *p.UpdateMode
	}
	return def
}

// SizesNewPods says whether the admission webhook sets the requests of a new pod: every mode but Off.
func (m UpdateMode) SizesNewPods() bool { return m != UpdateModeOff }

// ActsOnRunningPods says whether the updater changes running pods (resizes or evicts them): Recreate, Auto,
// InPlaceOrRecreate and InPlace (the last only with its feature gate, which the updater checks).
func (m UpdateMode) ActsOnRunningPods() bool {
	switch m {
	case UpdateModeRecreate, UpdateModeAuto, UpdateModeInPlaceOrRecreate, UpdateModeInPlace:
		return true
	}
	return false
}

// UpdaterActs says whether the updater acts on running pods in mode m: ActsOnRunningPods, and InPlace only
// with its feature gate on (inPlaceGate), as upstream's updater decides.
func (m UpdateMode) UpdaterActs(inPlaceGate bool) bool {
	return m.ActsOnRunningPods() && (m != UpdateModeInPlace || inPlaceGate)
}

// ResizesInPlace says whether the updater resizes running pods in place (pods/resize): InPlaceOrRecreate
// and InPlace.
func (m UpdateMode) ResizesInPlace() bool {
	return m == UpdateModeInPlaceOrRecreate || m == UpdateModeInPlace
}
