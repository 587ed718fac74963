package recommender

import (
	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/recommender"
)

// modelSet is the model of one VPA or Hvpa (the recommender's flags and the object's annotations) and, for
// container policies that set model fields of their own (oomBumpUpRatio, oomMinBumpUp,
// memoryAggregationIntervalSeconds/Count), theirs: these fields act where samples and OOM kills are
// recorded, so the feed picks the model by container.
type modelSet struct {
	base *recommender.Model
	rp   *vpav1.PodResourcePolicy
	// containers by policy name ("*" included): the model of every container that policy applies to
	containers map[string]*recommender.Model
}

// modelsFor builds the modelSet of an object from its configuration and resource policy (its container
// policies' model fields with the PerVPAConfig gate on only); an invalid field is an error naming it.
func (r *Recommender) modelsFor(cfg recommender.Config, rp *vpav1.PodResourcePolicy) (*modelSet, error) {
	ms := &modelSet{base: r.model(cfg), rp: rp}
	if rp == nil || !r.Opts.PerVPAConfig {
		return ms, nil
	}
	for _, p := range rp.ContainerPolicies {
		c, has, err := recommender.ContainerConfig(cfg, rp, p.ContainerName)
		if err != nil {
			return nil, err
		}
		if !has {
			continue
		}
		if ms.containers == nil {
			ms.containers = map[string]*recommender.Model{}
		}
		ms.containers[p.ContainerName] = r.model(c)
	}
	return ms, nil
}

// For is the model of one container (nil set: nil). It follows the policy lookup (vpav1 PolicyFor): the
// container's own policy, else "*".
func (ms *modelSet) For(container string) *recommender.Model {
	if ms == nil {
		return nil
	}
	if len(ms.containers) > 0 {
		if p := ms.rp.PolicyFor(container); p != nil {
			if m, ok := ms.containers[p.ContainerName]; ok {
				return m
			}
		}
	}
	return ms.base
}
