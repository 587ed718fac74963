package main

import (
	"context"
	"hash/fnv"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hvpa-dev/hvpa/test/playedkubelet"
)

// The played usage is a function of time, the same for the seeded history and the live samples, so that the
// live samples continue the history as they would in a cluster that has run for days: each Deployment has a
// level (50-149m of CPU, 96-159 MiB of memory, from a hash of its name), a day curve of its own phase (CPU
// +-30%, memory +-10%), each pod a factor of 0.9 to 1.1 (from a hash of its name) and each sample a noise
// (CPU +-20%, memory +-5%, per 10 s). The recommender's targets and bounds move with it as they do on a real
// workload's usage, so the status writes of the measured loops come at the rate the model gives them, not
// never (a fixed usage) and not at every run (new VPAs without history).
const (
	cpuAmplitude, memAmplitude = 0.30, 0.10
	cpuNoise, memNoise         = 0.20, 0.05
	noiseSlot                  = 10 // seconds
)

// usageAt is the usage of the container of pod (of the Deployment app) at t.
func usageAt(app, pod string, t time.Time) playedkubelet.Usage {
	a, p := hash64(app), hash64(pod)
	return usageOf(a, p, t)
}

// usageOf is usageAt on the hashes of the Deployment's and the pod's names.
func usageOf(app, pod uint64, t time.Time) playedkubelet.Usage {
	day := 2 * math.Pi * (float64(t.Unix()%86400)/86400 + float64(app%1440)/1440)
	podFactor := 0.9 + float64(pod%21)/100
	n := splitmix(pod ^ uint64(t.Unix()/noiseSlot))
	noise := func(bits uint64, amplitude float64) float64 { // uniform in [1 - amplitude, 1 + amplitude]
		return 1 + amplitude*(2*float64(bits&0xffff)/0xffff-1)
	}
	cpu := float64(50+app%100) * (1 + cpuAmplitude*math.Sin(day)) * podFactor * noise(n, cpuNoise)
	mem := float64((96+(app>>8)%64)<<20) * (1 + memAmplitude*math.Sin(day)) * podFactor * noise(n>>16, memNoise)
	return playedkubelet.Usage{CPUMilli: max(1, int64(cpu)), MemoryBytes: int64(mem)}
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return splitmix(h.Sum64())
}

// splitmix is SplitMix64's finalizer: a well-mixed 64-bit hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// livePlay plays the usage of every container the fleet runs, following usageAt: the fleet's Usage records
// each container as its pod starts, and run sets every recorded container's usage every 5 seconds (the noise
// changes every 10).
type livePlay struct {
	ms *playedkubelet.MetricsServer

	mu         sync.Mutex
	containers []playedContainer
}

type playedContainer struct {
	ns, pod, container string
	app, podHash       uint64
}

// usage is the fleet's Usage: it records the container and returns its usage now.
func (l *livePlay) usage(p *corev1.Pod, container string) playedkubelet.Usage {
	c := playedContainer{p.Namespace, p.Name, container, hash64(p.Labels["app"]), hash64(p.Name)}
	l.mu.Lock()
	l.containers = append(l.containers, c)
	l.mu.Unlock()
	return usageOf(c.app, c.podHash, time.Now())
}

// run sets every recorded container's usage every 5 seconds until ctx ends.
func (l *livePlay) run(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			l.mu.Lock()
			cs := l.containers
			l.mu.Unlock()
			for _, c := range cs {
				l.ms.Set(c.ns, c.pod, c.container, usageOf(c.app, c.podHash, now))
			}
		}
	}
}
