// Command crdpatch finishes the CRDs controller-gen writes, for what its markers cannot say: it gives every
// resource.Quantity schema (int-or-string with the quantity pattern) a maxLength, and every map of
// quantities (a ResourceList) a maxProperties. Without bounds, the API server estimates the cost of CEL
// rules that parse quantities (quantity(...), isQuantity(...)) from the largest possible request and refuses
// the CRD; no real quantity is longer than 40 characters, no ResourceList has more than 32 resources.
//
// It also gives the VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint CRDs the v1beta2 entries
// upstream's CRDs keep (served: false, storage: false, the v1 schema): a cluster where v1beta2 is still
// among status.storedVersions refuses a CRD update that drops the version.
//
// Usage: hack/run.sh crdpatch DIR   (rewrites every *.yaml in DIR in place; running it twice changes nothing)
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

const (
	quantityMaxLength   = "40"
	resourceListMaxSize = "32"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch DIR")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err != nil || len(files) == 0 {
		fmt.Fprintf(os.Stderr, "crdpatch: no CRD files in %s\n", os.Args[1])
		os.Exit(1)
	}
	for _, f := range files {
		if err := patchFile(f); err != nil {
			fmt.Fprintf(os.Stderr, "crdpatch: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}

func patchFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	bound(&doc)
	if err := unservedV1beta2(&doc); err != nil {
		return err
	}
	var out bytes.Buffer
	out.WriteString("---\n")
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// bound walks the document and adds maxLength to every quantity schema and maxProperties to every map of
// quantities that has none.
func bound(n *yaml.Node) {
	if n.Kind == yaml.MappingNode && isQuantitySchema(n) && value(n, "maxLength") == nil {
		n.Content = append(n.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "maxLength"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: quantityMaxLength})
	}
	if n.Kind == yaml.MappingNode && value(n, "maxProperties") == nil {
		if ap := value(n, "additionalProperties"); ap != nil && ap.Kind == yaml.MappingNode && isQuantitySchema(ap) {
			n.Content = append(n.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "maxProperties"},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: resourceListMaxSize})
		}
	}
	for _, c := range n.Content {
		bound(c)
	}
}

func isQuantitySchema(n *yaml.Node) bool {
	ios, pattern := value(n, "x-kubernetes-int-or-string"), value(n, "pattern")
	return ios != nil && ios.Value == "true" && pattern != nil && pattern.Value != ""
}

func value(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// v1beta2Kinds are the CRDs upstream keeps a v1beta2 entry for, and whether it says it is deprecated.
var v1beta2Kinds = map[string]bool{
	"verticalpodautoscalers.autoscaling.k8s.io":           true,
	"verticalpodautoscalercheckpoints.autoscaling.k8s.io": false,
}

// unservedV1beta2 sets the v1beta2 entry of a VPA CRD to a copy of v1 that is neither served nor stored
// (replacing an earlier one, so running twice changes nothing).
func unservedV1beta2(doc *yaml.Node) error {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	name := value(value(root, "metadata"), "name")
	deprecated, ok := v1beta2Kinds[name.Value]
	if name == nil || !ok {
		return nil
	}
	versions := value(value(root, "spec"), "versions")
	var v1 *yaml.Node
	kept := versions.Content[:0]
	for _, v := range versions.Content {
		switch value(v, "name").Value {
		case "v1":
			v1 = v
		case "v1beta2":
			continue
		}
		kept = append(kept, v)
	}
	if v1 == nil {
		return fmt.Errorf("%s has no v1 version", name.Value)
	}
	beta := &yaml.Node{Kind: yaml.MappingNode}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	boolean := func(v bool) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(v)} }
	if deprecated {
		beta.Content = append(beta.Content, str("deprecated"), boolean(true), str("deprecationWarning"), str("autoscaling.k8s.io/v1beta2 API is deprecated"))
	}
	beta.Content = append(beta.Content, str("name"), str("v1beta2"), str("schema"), value(v1, "schema"), str("served"), boolean(false), str("storage"), boolean(false))
	if sub := value(v1, "subresources"); sub != nil {
		beta.Content = append(beta.Content, str("subresources"), sub)
	}
	versions.Content = append(kept, beta)
	return nil
}
