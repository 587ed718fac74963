package metricsauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// apiServer plays the two reviews: token "prom" is user prometheus (allowed to get /metrics), "nobody" is a
// user allowed nothing, any other token is not accepted; down makes both calls fail.
type apiServer struct {
	tokenReviews, accessReviews int
	down                        bool
}

type tokenReviews struct{ s *apiServer }

func (t tokenReviews) Create(_ context.Context, tr *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	t.s.tokenReviews++
	if t.s.down {
		return nil, errors.New("connection refused")
	}
	out := tr.DeepCopy()
	switch tr.Spec.Token {
	case "prom":
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "system:serviceaccount:monitoring:prometheus",
			Groups: []string{"system:serviceaccounts"}, Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"prometheus-0"}}}}
	case "nobody":
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "nobody"}}
	}
	return out, nil
}

type accessReviews struct{ s *apiServer }

func (a accessReviews) Create(_ context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	a.s.accessReviews++
	if a.s.down {
		return nil, errors.New("connection refused")
	}
	out := sar.DeepCopy()
	na := sar.Spec.NonResourceAttributes
	out.Status.Allowed = sar.Spec.User == "system:serviceaccount:monitoring:prometheus" && len(sar.Spec.Extra["authentication.kubernetes.io/pod-name"]) == 1 &&
		na != nil && na.Path == "/metrics" && na.Verb == "get"
	return out, nil
}

func TestFilter(t *testing.T) {
	s := &apiServer{}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC))
	served := 0
	h, err := Filter(Reviews{Tokens: tokenReviews{s}, Access: accessReviews{s}}, clk)(logr.Discard(),
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served++; _, _ = w.Write([]byte("hvpa_up 1\n")) }))
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, token string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, c := range []struct {
		name, path, token string
		code              int
		body              string
	}{
		{"no token", "/metrics", "", 401, "a bearer token is required"},
		{"a token the API server does not accept", "/metrics", "forged", 401, "does not accept the token"},
		{"an identity without the role", "/metrics", "nobody", 403, "nobody may not get /metrics"},
		{"the scraper, on a path its role does not name", "/debug/pprof/", "prom", 403, "may not get /debug/pprof/"},
		{"the scraper", "/metrics", "prom", 200, "hvpa_up 1"},
	} {
		code, body := get(c.path, c.token)
		if code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, code, body, c.code, c.body)
		}
	}
	if served != 1 {
		t.Errorf("the metrics were served %d times, want once (to the scraper only)", served)
	}

	// answers are reused for a while: a scrape every 15 s does not review the token each time
	tr, ar := s.tokenReviews, s.accessReviews
	clk.Step(30 * time.Second)
	if code, _ := get("/metrics", "prom"); code != 200 || s.tokenReviews != tr || s.accessReviews != ar {
		t.Errorf("30 s later: %d, %d more token and %d more access reviews, want 200 from the cache", code, s.tokenReviews-tr, s.accessReviews-ar)
	}
	clk.Step(31 * time.Second)
	if code, _ := get("/metrics", "prom"); code != 200 || s.tokenReviews != tr+1 || s.accessReviews != ar+1 {
		t.Errorf("after a minute: %d, %d more token and %d more access reviews, want 200 reviewed again", code, s.tokenReviews-tr, s.accessReviews-ar)
	}

	// the API server down: 503, and the failure is not remembered as an answer
	s.down = true
	clk.Step(2 * time.Minute)
	if code, body := get("/metrics", "prom"); code != 503 || !strings.Contains(body, "cannot review the token") {
		t.Errorf("API server down: %d %q, want 503", code, body)
	}
	s.down = false
	if code, _ := get("/metrics", "prom"); code != 200 {
		t.Errorf("API server back: %d, want 200 at once", code)
	}
}

// A flood of requests with forged tokens (each one reviewed: the API server alone knows a token is forged)
// fills the cache of refusals only: the scraper's allowed answer stays, and its next scrape within the minute
// costs no review.
func TestForgedTokensDoNotEvictTheScrapersAnswer(t *testing.T) {
	s := &apiServer{}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC))
	g := newGuard(Reviews{Tokens: tokenReviews{s}, Access: accessReviews{s}}, clk)
	get := func(token string) int {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		code, _ := g.decide(req)
		return code
	}
	if code := get("prom"); code != 200 || s.tokenReviews != 1 {
		t.Fatalf("the scraper: %d after %d token reviews", code, s.tokenReviews)
	}
	for i := range 3 * maxCached {
		if code := get(fmt.Sprintf("forged-%d", i)); code != 401 {
			t.Fatalf("forged token %d: %d, want 401", i, code)
		}
	}
	if s.tokenReviews != 1+3*maxCached {
		t.Errorf("%d token reviews for %d forged tokens, want one each", s.tokenReviews-1, 3*maxCached)
	}
	clk.Step(30 * time.Second)
	before := s.tokenReviews
	if code := get("prom"); code != 200 || s.tokenReviews != before {
		t.Errorf("the scraper after the flood: %d, %d more token reviews; want 200 from the cache", code, s.tokenReviews-before)
	}
	if code := get("forged-0"); code != 401 || s.tokenReviews != before+1 {
		t.Errorf("a forged token after the refusals were dropped: %d, %d more token reviews; want 401 reviewed again", code, s.tokenReviews-before)
	}
}

// blockingReviews answers token reviews as apiServer does, once released, counting them under a lock.
type blockingReviews struct {
	mu      sync.Mutex
	n       int
	release chan struct{}
	s       *apiServer
}

func (b *blockingReviews) Create(ctx context.Context, tr *authenticationv1.TokenReview, o metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	b.mu.Lock()
	b.n++
	b.mu.Unlock()
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return tokenReviews{b.s}.Create(ctx, tr, o)
}

// Requests with the same token that arrive while its review is under way (a scraper's replicas, its
// retries) wait for that review: one token review and one access review for all of them.
func TestConcurrentRequestsShareOneReview(t *testing.T) {
	s := &apiServer{}
	tokens := &blockingReviews{release: make(chan struct{}), s: s}
	g := newGuard(Reviews{Tokens: tokens, Access: accessReviews{s}}, clocktesting.NewFakeClock(time.Now()))
	const n = 8
	codes := make(chan int, n)
	for range n {
		go func() {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Authorization", "Bearer prom")
			code, _ := g.decide(req)
			codes <- code
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		waiting := g.waiting
		g.mu.Unlock()
		if waiting == n-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests wait for the review under way, want %d", waiting, n-1)
		}
		time.Sleep(time.Millisecond)
	}
	close(tokens.release)
	for range n {
		if code := <-codes; code != 200 {
			t.Errorf("a request got %d, want 200", code)
		}
	}
	if tokens.n != 1 || s.accessReviews != 1 {
		t.Errorf("%d token and %d access reviews for %d concurrent requests with one token, want 1 and 1", tokens.n, s.accessReviews, n)
	}
}
