package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// roundRobin is a TCP proxy on 127.0.0.1 that hands each new connection to the next of its backends, as a
// Service's kube-proxy does: the API server's webhook client keeps its connections open, so the requests
// follow the connections, not a per-request rotation.
type roundRobin struct {
	ln       net.Listener
	mu       sync.Mutex
	backends []string
	next     int // the backend of the next connection (under mu)
}

// newRoundRobin listens on a free port until ctx ends.
func newRoundRobin(ctx context.Context) (*roundRobin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &roundRobin{ln: ln}
	go func() { <-ctx.Done(); _ = ln.Close() }()
	go p.serve()
	return p, nil
}

// add makes the process listening on port a backend and returns the proxy's port.
func (p *roundRobin) add(port int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = append(p.backends, fmt.Sprintf("127.0.0.1:%d", port))
	return p.ln.Addr().(*net.TCPAddr).Port
}

func (p *roundRobin) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		to := p.backends[p.next%len(p.backends)]
		p.next++
		p.mu.Unlock()
		go pipe(in, to)
	}
}

// pipe copies between in and a new connection to addr until either side closes.
func pipe(in net.Conn, addr string) {
	defer func() { _ = in.Close() }() // a proxy's connection: nothing to report on close
	out, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer func() { _ = out.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

// createHvpas creates n Hvpas in a namespace of their own (their targets need not exist: the webhook's
// caches hold them, and each pod admission considers them), 16 at a time.
func createHvpas(ctx context.Context, c client.Client, n int) error {
	const ns = "bench-hvpas"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			h := wrappers.MakeHvpa(ns, fmt.Sprintf("hvpa-%04d", i)).HPA(true, 1, 5).Utilization(corev1.ResourceCPU, 50).
				Controlled(corev1.ResourceCPU).CPUPerReplica("500m", "1", "2", "4", "8").Obj()
			return c.Create(ctx, h)
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("creating the burst's Hvpas: %w", err)
	}
	return nil
}

// burstCase is the client-side round trip of the pod CREATEs of one burst.
type burstCase struct {
	name     string
	rate     int
	took     []time.Duration // sorted
	sized    int
	failed   int
	late     time.Duration // how far behind schedule the last CREATE was sent
	duration time.Duration
	handler  *handlerHist // the webhook's own handling time over the burst; nil: no admission was handled
}

// runBurst sends cfg.burstRate pod CREATEs a second for cfg.burstFor (each pod deleted after its CREATE),
// each at its time whatever the answers of the earlier ones, through a client without a rate limit.
func runBurst(ctx context.Context, restCfg *rest.Config, cfg config, name string, newPod func() *corev1.Pod) (burstCase, error) {
	rc := rest.CopyConfig(restCfg)
	rc.QPS, rc.Burst = -1, 0 // no client-side rate limit: the burst is what the API server and the webhook see
	c, err := client.New(rc, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return burstCase{}, err
	}
	b := burstCase{name: name, rate: cfg.burstRate}
	total := int(cfg.burstFor.Seconds() * float64(cfg.burstRate))
	every := time.Second / time.Duration(cfg.burstRate)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i := range total {
		due := start.Add(time.Duration(i) * every)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		if late := time.Since(due); late > b.late {
			b.late = late
		}
		if ctx.Err() != nil {
			return b, ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newPod()
			p.Name = fmt.Sprintf("burst-%d-%d", start.UnixNano(), i)
			took, err := createDelete(ctx, c, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				b.failed++
				return
			}
			b.took = append(b.took, took)
			if sized(p) {
				b.sized++
			}
		}()
	}
	wg.Wait()
	b.duration = time.Since(start)
	slices.Sort(b.took)
	return b, nil
}

// line is the burst's one-line summary.
func (b burstCase) line() string {
	return fmt.Sprintf("%-60s %d/s for %s: p50 %-8s p99 %-8s max %-8s (sized %d of %d, %d failed; sent at most %s late)", b.name, b.rate,
		b.duration.Round(time.Second), ms(percentile(b.took, 0.5)), ms(percentile(b.took, 0.99)), ms(percentile(b.took, 1)), b.sized, len(b.took), b.failed, b.late.Round(time.Millisecond))
}
