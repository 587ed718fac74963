// Command image assembles hvpa's OCI image without a container engine: each platform's static binary becomes
// one layer (/hvpa, and /etc/passwd and /etc/group naming the non-root user 65532), the image config says
// who runs what (user 65532:65532, entrypoint /hvpa, OCI labels with the version and revision), and the
// platforms form one multi-arch index, written as an OCI image layout and, with --push, to a registry.
// Every timestamp is --created (the commit's time), so the same binaries give the same digests.
//
//	hack/run.sh image --out .cache/image/oci --version v0.2.0 --revision <sha> --created <unix seconds> \
//	    --binary linux/amd64=.cache/image/hvpa-linux-amd64 --binary linux/arm64=.cache/image/hvpa-linux-arm64
//
// `make image` builds the binaries and the SBOM and calls this; docs/release.md says how a release uses it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// binaries is the repeated --binary os/arch=path flag.
type binaries []platformBinary

func (b *binaries) String() string { return fmt.Sprint(*b) }

func (b *binaries) Set(v string) error {
	platform, path, ok := strings.Cut(v, "=")
	osName, arch, ok2 := strings.Cut(platform, "/")
	if !ok || !ok2 || path == "" {
		return fmt.Errorf("--binary %q: want os/arch=path, e.g. linux/arm64=.cache/image/hvpa-linux-arm64", v)
	}
	*b = append(*b, platformBinary{OS: osName, Arch: arch, Path: path})
	return nil
}

func main() {
	var o options
	var bins binaries
	var created, push string
	flag.StringVar(&o.Out, "out", ".cache/image/oci", "the OCI image layout folder to write (replaced)")
	flag.StringVar(&o.Version, "version", "dev", "the version: the image's version label and the layout's reference name")
	flag.StringVar(&o.Revision, "revision", "", "the source revision (git commit) for the revision label")
	flag.StringVar(&created, "created", "0", "the creation time, unix seconds (the commit's time, for reproducible digests)")
	flag.StringVar(&push, "push", "", "also push the index to this reference (e.g. ghcr.io/hvpa-dev/hvpa:v0.2.0), with the credentials of ~/.docker/config.json")
	flag.Var(&bins, "binary", "os/arch=path of a static hvpa binary (repeat per platform)")
	flag.Parse()
	o.Binaries = bins
	if err := run(o, created, push); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o options, created, push string) error {
	secs, err := strconv.ParseInt(created, 10, 64)
	if err != nil {
		return fmt.Errorf("--created %q: want unix seconds (git log -1 --format=%%ct): %w", created, err)
	}
	o.Created = time.Unix(secs, 0).UTC()
	if len(o.Binaries) == 0 {
		return errors.New("no --binary: give one os/arch=path per platform")
	}
	idx, err := Index(o)
	if err != nil {
		return err
	}
	if err := WriteLayout(o.Out, o.Version, idx); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image: %s %s (%d platforms) in %s\n", o.Version, digest, len(o.Binaries), o.Out)
	if push == "" {
		return nil
	}
	ref, err := name.ParseReference(push)
	if err != nil {
		return fmt.Errorf("--push %q: %w", push, err)
	}
	if err := remote.WriteIndex(ref, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	fmt.Printf("image: pushed %s@%s\n", ref, digest)
	return nil
}
