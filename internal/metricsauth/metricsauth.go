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

// How long an answer is reused: a scrape every 15-30 s costs two reviews per minute at most, and a revoked
// binding or token stops working within a minute (a refusal within 10 s of a fix).
const (
	allowedFor = time.Minute
	refusedFor = 10 * time.Second
	// maxCached bounds the cache; when it is full it starts anew
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
	g := &guard{reviews: r, clock: clk, cache: map[[sha256.Size]byte]answer{}}
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
	cache   map[[sha256.Size]byte]answer // by token, verb and path
}

func (g *guard) decide(req *http.Request) (int, string) {
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return http.StatusUnauthorized, "Unauthorized: a bearer token is required"
	}
	verb := strings.ToLower(req.Method)
	key := sha256.Sum256([]byte(verb + " " + req.URL.Path + " " + token))
	now := g.clock.Now()
	g.mu.Lock()
	a, ok := g.cache[key]
	g.mu.Unlock()
	if ok && now.Before(a.expires) {
		return a.code, a.why
	}
	a = g.review(req.Context(), token, verb, req.URL.Path)
	if a.code == http.StatusServiceUnavailable {
		return a.code, a.why // not an answer: ask again next time
	}
	a.expires = now.Add(map[bool]time.Duration{true: allowedFor, false: refusedFor}[a.code == http.StatusOK])
	g.mu.Lock()
	if len(g.cache) >= maxCached {
		clear(g.cache)
	}
	g.cache[key] = a
	g.mu.Unlock()
	return a.code, a.why
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
