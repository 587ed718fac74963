package scaling

import (
	"math"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// BoostCPU is a container's CPU request and limit while its startup boost lasts (upstream's CPU startup
// boost, AEP-7862), from the values it has without it (millicores; limit < 0: none). Factor multiplies the
// request, Quantity is added to it; the result is rounded up to a whole millicore. The limit keeps its ratio
// to the request (controlledValues RequestsAndLimits), or stays as it is with the boosted request capped 1m
// below it (RequestsOnly; not boosted at all where the request is at the limit), so that the QoS class stays. maxCPU (millicores, upstream's --max-allowed-cpu-boost; 0: none) caps the boosted
// request, never below the unboosted one. No boost (nil, or an unknown type): the values as they are.
func BoostCPU(b *vpav1.GenericStartupBoost, request, limit float64, requestsOnly bool, maxCPU float64) (float64, float64) {
	if b == nil || request <= 0 {
		return request, limit
	}
	boosted := request
	switch {
	case b.Type == vpav1.StartupBoostFactor && b.Factor != nil && *b.Factor >= 1:
		boosted = request * float64(*b.Factor)
	case b.Type == vpav1.StartupBoostQuantity && b.Quantity != nil && b.Quantity.Sign() > 0:
		boosted = request + float64(b.Quantity.MilliValue())
	}
	boosted = math.Ceil(boosted - 1e-9)
	if maxCPU > 0 {
		boosted = min(boosted, max(maxCPU, request))
	}
	switch {
	case limit < 0:
		return boosted, limit
	case requestsOnly && request >= limit:
		return request, limit // at its limit already (Guaranteed): no room to boost
	case requestsOnly:
		// 1m below the limit at most (upstream caps a boost above the limit there, and leaves one at it): a
		// request at its limit can make the pod Guaranteed, and no resize takes a pod back across QoS classes
		// when the boost ends
		return max(request, min(boosted, limit-1)), limit
	}
	return boosted, math.Ceil(boosted*limit/request - 1e-9)
}

// BoostDuration is how long a boost lasts after the pod becomes Ready (durationSeconds; 0: it ends when
// the pod is Ready).
func BoostDuration(b *vpav1.GenericStartupBoost) time.Duration {
	if b == nil || b.DurationSeconds == nil || *b.DurationSeconds < 0 {
		return 0
	}
	return time.Duration(*b.DurationSeconds) * time.Second
}
