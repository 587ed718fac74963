// Package metricsauth guards the metrics endpoint the way Kubernetes' own components guard theirs: a request
// needs a bearer token the API server authenticates (TokenReview) and an identity the API server authorizes
// to get the URL path (SubjectAccessReview on a non-resource URL, e.g. nonResourceURLs: ["/metrics"]).
//
// controller-runtime's filters.WithAuthenticationAndAuthorization does the same through k8s.io/apiserver,
// which adds 28 MB to the binary and 16 MiB to every process's memory at start; the two reviews are all the
// metrics endpoint needs, so they are made here with client-go, and their answers cached briefly.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Reviews are the two API calls a decision needs (client-go's typed clients, or fakes in tests).
type Reviews struct {
	Tokens interface {
		Create(context.Context, *authenticationv1.TokenReview, metav1.CreateOptions) (*authenticationv1.TokenReview, error)
	}
	Access interface {
		Create(context.Context, *authorizationv1.SubjectAccessReview, metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
	}
}

// How long an answer is reused, as the API server's delegating authenticator and kube-rbac-proxy cache
// theirs: a scrape every 15-30 s costs one token and one access review per minute, and a revoked binding or
// token stops working within a minute (a refusal within 10 s of a fix).
const (
	allowedFor = time.Minute
	refusedFor = 10 * time.Second
	// maxCached bounds each of the two caches (allowed answers, refusals); a full one drops its expired
	// answers, then starts anew: a flood of forged tokens fills the refusals only, never pushing the
	// scrapers' allowed answers out
	maxCached = 1024
)

// FilterProvider is a metricsserver.Options.FilterProvider: the reviews go to the API server of cfg.
func FilterProvider(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("the metrics endpoint's API client: %w", err)
	}
	return Filter(Reviews{Tokens: cs.AuthenticationV1().TokenReviews(), Access: cs.AuthorizationV1().SubjectAccessReviews()}, clock.RealClock{}), nil
}

// Filter wraps a handler so that it answers only authenticated and authorized requests: 401 without a valid
// bearer token, 403 when the identity may not get the path, 503 when the API server cannot be asked.
func Filter(r Reviews, clk clock.PassiveClock) metricsserver.Filter {
	g := newGuard(r, clk)
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			code, why := g.decide(req)
			if code != http.StatusOK {
				if code == http.StatusServiceUnavailable {
					log.Error(fmt.Errorf("%s", why), "metrics request not checked", "path", req.URL.Path)
				}
				http.Error(w, why, code)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}
}

type answer struct {
	code    int
	why     string
	expires time.Time
}

type guard struct {
	reviews Reviews
	clock   clock.PassiveClock
	mu      sync.Mutex
	// allowed and refused are the answers by token, verb and path (its hash)
	allowed, refused map[[sha256.Size]byte]answer
	// inflight are the reviews under way: requests with the same token, verb and path wait for it rather
	// than asking again (a scraper's replicas, retries)
	inflight map[[sha256.Size]byte]*review
	waiting  int // requests waiting for another's review (tests)
}

func newGuard(r Reviews, clk clock.PassiveClock) *guard {
	return &guard{reviews: r, clock: clk, allowed: map[[sha256.Size]byte]answer{}, refused: map[[sha256.Size]byte]answer{},
		inflight: map[[sha256.Size]byte]*review{}}
}

// review is one review under way; done is closed once a is set.
type review struct {
	done chan struct{}
	a    answer
}

func (g *guard) decide(req *http.Request) (int, string) {
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return http.StatusUnauthorized, "Unauthorized: a bearer token is required"
	}
	verb := strings.ToLower(req.Method)
	key := sha256.Sum256([]byte(verb + " " + req.URL.Path + " " + token))
	g.mu.Lock()
	if a, ok := g.cached(key); ok {
		g.mu.Unlock()
		return a.code, a.why
	}
	if rv, ok := g.inflight[key]; ok {
		g.waiting++
		g.mu.Unlock()
		select {
		case <-rv.done:
		case <-req.Context().Done():
		}
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
		if req.Context().Err() != nil {
			return http.StatusServiceUnavailable, "the request ended before its review"
		}
		return rv.a.code, rv.a.why
	}
	rv := &review{done: make(chan struct{})}
	g.inflight[key] = rv
	g.mu.Unlock()

	rv.a = g.review(req.Context(), token, verb, req.URL.Path)
	g.mu.Lock()
	delete(g.inflight, key)
	g.remember(key, rv.a)
	g.mu.Unlock()
	close(rv.done)
	return rv.a.code, rv.a.why
}

// cached is the unexpired answer for key (g.mu held).
func (g *guard) cached(key [sha256.Size]byte) (answer, bool) {
	now := g.clock.Now()
	for _, c := range []map[[sha256.Size]byte]answer{g.allowed, g.refused} {
		if a, ok := c[key]; ok && now.Before(a.expires) {
			return a, true
		}
	}
	return answer{}, false
}

// remember keeps an answer for its time (g.mu held); a failed review (503) is not an answer: the next request
// asks again.
func (g *guard) remember(key [sha256.Size]byte, a answer) {
	if a.code == http.StatusServiceUnavailable {
		return
	}
	now := g.clock.Now()
	c, ttl := g.refused, refusedFor
	if a.code == http.StatusOK {
		c, ttl = g.allowed, allowedFor
	}
	if len(c) >= maxCached {
		for k, old := range c {
			if !now.Before(old.expires) {
				delete(c, k)
			}
		}
		if len(c) >= maxCached {
			clear(c)
		}
	}
	a.expires = now.Add(ttl)
	c[key] = a
}

// review asks the API server who the token is and whether that identity may verb the path.
func (g *guard) review(ctx context.Context, token, verb, path string) answer {
	tr, err := g.reviews.Tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return answer{code: http.StatusServiceUnavailable, why: fmt.Sprintf("cannot review the token: %v", err)}
	}
	if !tr.Status.Authenticated {
		return answer{code: http.StatusUnauthorized, why: "Unauthorized: the API server does not accept the token"}
	}
	u := tr.Status.User
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := g.reviews.Access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return answer{code: http.StatusServiceUnavailable, why: fmt.Sprintf("cannot review %s's access: %v", u.Username, err)}
	}
	if !sar.Status.Allowed {
		return answer{code: http.StatusForbidden, why: fmt.Sprintf("Forbidden: %s may not %s %s (needs nonResourceURLs %q, verb %q)", u.Username, verb, path, path, verb)}
	}
	return answer{code: http.StatusOK}
}
