package main

import (
	"archive/tar"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image under test is built by the Makefile before `go test` runs, outside go test's time limit: each
// platform is a full static, trimmed build of the dependency tree (minutes on a cold build cache).
// `make test` builds the host's linux platform into .cache/image-test; `make test-image` builds the
// release's platforms (IMAGE_PLATFORMS) into .cache/image-test-all. Both set these variables.
const (
	dirEnv       = "HVPA_IMAGE_TEST_DIR"  // the IMAGE_DIR `make image` wrote the layout, binaries and SBOM to
	platformsEnv = "HVPA_IMAGE_PLATFORMS" // the platforms it was built for
)

// testVersion and testCreated are the VERSION and CREATED the Makefile builds the image under test with.
const (
	testVersion = "v0.0.0-imagetest"
	testCreated = 1700000000
)

// machines is the ELF machine each platform's binary must be built for.
var machines = map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}

// TestImage checks the image `make image` built, as a platform team pulls it: the layout's index with one
// image per platform, each image's config (non-root user, entrypoint, labels), the host's binary taken out of
// its layer running `hvpa version`, every binary being an executable of its platform, the SBOM, that the same
// binaries give the same digest, and a push to a registry.
func TestImage(t *testing.T) {
	dir := os.Getenv(dirEnv)
	if dir == "" {
		t.Skipf("%s is not set: the image is built by `make test` (host platform) or `make test-image` (every release platform) before this test inspects it", dirEnv)
	}
	platforms := imagePlatforms()
	t.Logf("inspecting the image in %s built for %v", dir, platforms)
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatalf("%v (%s=%s: run `make test` or `make test-image`)", err, dirEnv, dir)
	}
	images := checkIndex(t, idx, platforms)
	work := t.TempDir()
	for _, platform := range platforms {
		checkConfig(t, platform, images[platform])
		bin := extract(t, images[platform], "hvpa", filepath.Join(work, "extracted-"+strings.ReplaceAll(platform, "/", "-")))
		checkMachine(t, bin, machines[platform])
		if platform == runtime.GOOS+"/"+runtime.GOARCH {
			checkRuns(t, bin)
		}
	}
	checkSBOM(t, filepath.Join(dir, "sbom.cdx.json"))
	checkReproducible(t, dir, idx, platforms)
	checkPush(t, idx)
}

// imagePlatforms: the platforms of platformsEnv, or the host's linux platform.
func imagePlatforms() []string {
	if list := strings.Fields(os.Getenv(platformsEnv)); len(list) > 0 {
		return list
	}
	return []string{"linux/" + runtime.GOARCH}
}

// checkIndex: an OCI index named testVersion with one image per platform; returns them by os/arch.
func checkIndex(t *testing.T, idx v1.ImageIndex, platforms []string) map[string]v1.Image {
	t.Helper()
	outer, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(outer.Manifests) != 1 || outer.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != testVersion {
		t.Fatalf("layout index %+v: want one index named %s", outer.Manifests, testVersion)
	}
	inner, err := idx.ImageIndex(outer.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := inner.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", m.MediaType, types.OCIImageIndex)
	}
	images := map[string]v1.Image{}
	for _, d := range m.Manifests {
		img, err := inner.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		images[d.Platform.OS+"/"+d.Platform.Architecture] = img
	}
	if len(images) != len(platforms) {
		t.Fatalf("platforms %v, want %v", m.Manifests, platforms)
	}
	for _, p := range platforms {
		if images[p] == nil {
			t.Fatalf("platforms %v, want %v", m.Manifests, platforms)
		}
	}
	return images
}

func checkConfig(t *testing.T, platform string, img v1.Image) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.OS + "/" + cfg.Architecture; got != platform {
		t.Errorf("%s: config platform %s", platform, got)
	}
	if cfg.Config.User != "65532:65532" || strings.Join(cfg.Config.Entrypoint, " ") != "/hvpa" {
		t.Errorf("%s: user %q entrypoint %q, want 65532:65532 and /hvpa", platform, cfg.Config.User, cfg.Config.Entrypoint)
	}
	want := map[string]string{"org.opencontainers.image.version": testVersion, "org.opencontainers.image.source": Source,
		"org.opencontainers.image.created": "2023-11-14T22:13:20Z"}
	for k, v := range want {
		if cfg.Config.Labels[k] != v {
			t.Errorf("%s: label %s = %q, want %q", platform, k, cfg.Config.Labels[k], v)
		}
	}
	if !cfg.Created.Equal(time.Unix(testCreated, 0)) {
		t.Errorf("%s: created %s, want the CREATED time", platform, cfg.Created)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("%s: manifest media type %s", platform, mt)
	}
}

// extract writes the file named file of img's only layer to path.
func extract(t *testing.T, img v1.Image, file, path string) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }() // read only: Close has nothing to lose
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("no %s in the layer", file)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "etc/passwd" {
			data, _ := io.ReadAll(tr)
			if !strings.Contains(string(data), "nonroot:x:65532:65532:") {
				t.Errorf("/etc/passwd does not name the user 65532:\n%s", data)
			}
		}
		if h.Name != file {
			continue
		}
		if h.Mode&0o111 == 0 || h.Uid != 0 {
			t.Errorf("%s: mode %o uid %d, want executable and owned by root", file, h.Mode, h.Uid)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// checkRuns runs the host's binary from the image: `hvpa version` names the version and the platform.
func checkRuns(t *testing.T, bin string) {
	t.Helper()
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("hvpa version from the image: %v", err)
	}
	var info struct{ Version, Platform string }
	if err := json.Unmarshal(out, &info); err != nil || info.Version != testVersion || info.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("hvpa version from the image: %s (%v), want %s on %s/%s", out, err, testVersion, runtime.GOOS, runtime.GOARCH)
	}
}

func checkMachine(t *testing.T, bin string, want elf.Machine) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: Close has nothing to lose
	if f.Machine != want {
		t.Errorf("%s is for %s, want %s", bin, f.Machine, want)
	}
}

// checkSBOM: a CycloneDX document for the hvpa module listing the modules the binary links.
func checkSBOM(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name string } `json:"component"`
		} `json:"metadata"`
		Components []struct{ Name, Version string } `json:"components"`
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != "github.com/hvpa-dev/hvpa" {
		t.Errorf("SBOM format %q component %q", bom.BOMFormat, bom.Metadata.Component.Name)
	}
	found := map[string]string{}
	for _, c := range bom.Components {
		found[c.Name] = c.Version
	}
	for _, m := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "github.com/prometheus/client_golang"} {
		if found[m] == "" {
			t.Errorf("SBOM lists no %s (%d components)", m, len(bom.Components))
		}
	}
}

// checkReproducible assembles the image again from the same binaries: the same digest.
func checkReproducible(t *testing.T, dir string, idx v1.ImageIndex, platforms []string) {
	t.Helper()
	o := options{Version: testVersion, Created: time.Unix(testCreated, 0).UTC()}
	for _, p := range platforms {
		goos, arch, _ := strings.Cut(p, "/")
		o.Binaries = append(o.Binaries, platformBinary{OS: goos, Arch: arch, Path: filepath.Join(dir, "hvpa-"+goos+"-"+arch)})
	}
	again, err := Index(o)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := idx.IndexManifest()
	want := m.Manifests[0].Digest
	if got, _ := again.Digest(); got != want {
		t.Errorf("the same binaries give digest %s, the layout holds %s", got, want)
	}
}

// checkPush pushes the layout's index to a registry and reads the same digest back.
func checkPush(t *testing.T, idx v1.ImageIndex) {
	t.Helper()
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	m, _ := idx.IndexManifest()
	inner, err := idx.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/hvpa-dev/hvpa:" + testVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, inner); err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := got.Digest(); d != m.Manifests[0].Digest {
		t.Errorf("pulled %s, pushed %s", d, m.Manifests[0].Digest)
	}
}
