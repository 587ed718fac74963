package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModuleRootSkipsNestedModules: from inside the hack module (its own go.mod) and from a plain folder of
// the product module, ModuleRoot is the folder whose go.mod declares the product module.
func TestModuleRootSkipsNestedModules(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "// the product\nmodule "+ProductModule+"\n\ngo 1.26.0\n")
	write("hack/go.mod", "module "+ProductModule+"/hack\n\ngo 1.26.0\n\nreplace "+ProductModule+" => ../\n")
	write("hack/image/main.go", "package main\n")
	write("apis/x/x.go", "package x\n")
	for _, dir := range []string{"hack/image", "hack", "apis/x", "."} {
		t.Run(dir, func(t *testing.T) {
			t.Chdir(filepath.Join(root, dir))
			got, err := ModuleRoot()
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := filepath.EvalSymlinks(root); got != root && got != want {
				t.Errorf("ModuleRoot() = %s, want %s", got, root)
			}
		})
	}
}

// TestModuleRootRefusesForeignModule: a tree with no go.mod of the product module is an error, not another
// module's folder.
func TestModuleRootRefusesForeignModule(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	if got, err := ModuleRoot(); err == nil {
		t.Errorf("ModuleRoot() = %s, want an error naming %s", got, ProductModule)
	}
}
