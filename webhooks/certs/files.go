package certs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// The certificate folder has the layout of a mounted Secret, so that the certificate and the key switch
// together: the files live in a generation folder, the ..data symlink points to the current generation, and
// CertName and KeyName are symlinks through ..data. Writing a new pair is a new generation and one rename of
// ..data; readers never open a certificate of one generation with the key of another, except in the
// microseconds between their two opens.
const (
	dataLink         = "..data"
	generationPrefix = "..certs-"
)

// file is one file of the pair.
type file struct {
	name string
	data []byte
	perm os.FileMode
}

// writeFiles puts the serving certificate and key into CertDir when they differ from what is there.
func (r *Rotator) writeFiles(ctx context.Context, m Material) error {
	wrote, err := writePair(r.opts.CertDir, []file{{r.opts.CertName, m.Cert, 0o644}, {r.opts.KeyName, m.Key, 0o600}})
	if err != nil {
		return fmt.Errorf("writing the webhook certificate into %s: %w", r.opts.CertDir, err)
	}
	if wrote {
		logf.FromContext(ctx).Info("wrote the webhook serving certificate", "dir", r.opts.CertDir, "certNotAfter", notAfter(m.Cert))
	}
	return nil
}

// writePair writes the files as a new generation in dir and switches to it, unless dir holds them already. It
// replaces regular files of the same names (a folder written by something else before).
func writePair(dir string, files []file) (bool, error) {
	same := true
	for _, f := range files {
		if old, err := os.ReadFile(filepath.Join(dir, f.name)); err != nil || !bytes.Equal(old, f.data) {
			same = false
		}
	}
	if same {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	gen, err := os.MkdirTemp(dir, generationPrefix)
	if err != nil {
		return false, err
	}
	for _, f := range files {
		if err := writeSynced(filepath.Join(gen, f.name), f.data, f.perm); err != nil {
			_ = os.RemoveAll(gen)
			return false, err
		}
	}
	if err := symlinkAtomic(filepath.Base(gen), filepath.Join(dir, dataLink)); err != nil {
		_ = os.RemoveAll(gen)
		return false, err
	}
	for _, f := range files {
		path, target := filepath.Join(dir, f.name), filepath.Join(dataLink, f.name)
		if t, err := os.Readlink(path); err == nil && t == target {
			continue
		}
		if err := symlinkAtomic(target, path); err != nil {
			return false, err
		}
	}
	// drop the older generations; a reader that opened one keeps its file
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), generationPrefix) && e.Name() != filepath.Base(gen) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

// symlinkAtomic makes path a symlink to target, replacing what is at path in one rename.
func symlinkAtomic(target, path string) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

func writeSynced(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the write failed; its error is the one to report
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close() // the write failed; its error is the one to report
		return err
	}
	return f.Close()
}
