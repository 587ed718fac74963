// Package features holds hvpa's feature gates: their names, stages and defaults, in this one file.
package features

import (
	"k8s.io/component-base/featuregate"
)

// The feature gates.
const (
	// RequestToLimitRatio lets a VPA container policy set limits from requests by a factor or a quantity
	// (requestToLimitRatio, AEP-8515). Alpha, off by default: with it off, new objects using the field are
	// refused and existing ones are sized as if the field were absent.
	RequestToLimitRatio featuregate.Feature = "RequestToLimitRatio"
	// InPlace allows the InPlace update mode (resize running pods in place, never evict). Alpha, off.
	InPlace featuregate.Feature = "InPlace"
	// CPUStartupBoost (upstream VPA's gate, alpha, off) lets a VPA boost the CPU of starting pods
	// (spec.startupBoost, a container policy's startupBoost): the admission webhook boosts, the updater
	// resizes the pod back in place once the boost is over; the validating webhook refuses a new startupBoost
	// while it is off.
	CPUStartupBoost featuregate.Feature = "CPUStartupBoost"
	// PerVPAConfig (upstream VPA's gate, alpha, off) allows the per-object configuration fields: a container
	// policy's oomBumpUpRatio, oomMinBumpUp, memoryAggregationIntervalSeconds/Count and
	// updatePolicy.evictAfterOOMSeconds. As upstream: the validating webhook refuses new ones while it is off,
	// and the updater (evictAfterOOMSeconds) and the recommender (the container policy's fields) read them only
	// while it is on.
	PerVPAConfig featuregate.Feature = "PerVPAConfig"
)

// Specs are the gates this version knows, with their stage and default.
var Specs = map[featuregate.Feature]featuregate.FeatureSpec{
	RequestToLimitRatio: {Default: false, PreRelease: featuregate.Alpha},
	InPlace:             {Default: false, PreRelease: featuregate.Alpha},
	CPUStartupBoost:     {Default: false, PreRelease: featuregate.Alpha},
	PerVPAConfig:        {Default: false, PreRelease: featuregate.Alpha},
}

// New returns a feature gate holding Specs at their defaults, to be set from the --feature-gates flag.
func New() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(Specs); err != nil {
		panic(err) // Specs is a constant of this file; a failure here is a programming error
	}
	return g
}
