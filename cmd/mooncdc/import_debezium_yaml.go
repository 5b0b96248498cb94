package main

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mooncdc/mooncdc/connector/config"
)

// This file builds the YAML that import-debezium prints: a tree of yaml
// nodes in the order keys are set, with comments, so that the output reads
// like the README's reference config.

// notSupported marks a key this mooncdc version's config loader rejects.
const notSupported = "not yet supported by this mooncdc version"

// yamlTree is a YAML mapping built key by key.
type yamlTree struct {
	root *yaml.Node
	// supported reports whether the config loader accepts a dotted key
	// path (or has keys under it).
	supported func(path string) bool
}

func newYAMLTree(supported func(string) bool) *yamlTree {
	return &yamlTree{root: &yaml.Node{Kind: yaml.MappingNode}, supported: supported}
}

// loaderSupports reports whether connector's config has the key path or
// keys under it.
func loaderSupports(path string) bool {
	for _, k := range config.ConfigKeys() {
		if k == path || strings.HasPrefix(k, path+".") {
			return true
		}
	}
	return false
}

// set sets the key at path (dot-separated mooncdc key names) to value,
// creating the mappings on the way, with comment beside the key. The
// topmost key the loader does not know is marked notSupported.
func (t *yamlTree) set(path string, value any, comment string) {
	segs := strings.Split(path, ".")
	m := t.root
	parentOK := true
	for i, seg := range segs {
		prefix := strings.Join(segs[:i+1], ".")
		ok := parentOK && t.supported(prefix)
		k, v := lookup(m, seg)
		if k == nil {
			k = &yaml.Node{Kind: yaml.ScalarNode, Value: seg}
			if parentOK && !ok {
				k.LineComment = notSupported
			}
			v = &yaml.Node{Kind: yaml.MappingNode}
			m.Content = append(m.Content, k, v)
		}
		if i == len(segs)-1 {
			n := valueNode(value)
			*v = *n
			k.LineComment = joinComment(k.LineComment, comment)
			// yaml.v3 writes a key's line comment after a flow or
			// scalar value's end, where it reads as the next key's:
			// such a value carries the comment itself.
			if v.Kind != yaml.MappingNode || v.Style&yaml.FlowStyle != 0 {
				v.LineComment, k.LineComment = k.LineComment, ""
			}
			return
		}
		m, parentOK = v, ok
	}
}

func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func joinComment(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// valueNode encodes value; lists and the mappings inside them are written
// in flow style ([a, b], {columns: [x], chars: 8}) like the README.
func valueNode(value any) *yaml.Node {
	if n, ok := value.(*yaml.Node); ok {
		return n
	}
	n := &yaml.Node{}
	if err := n.Encode(value); err != nil {
		// Only the program's own types are encoded here.
		panic("import-debezium: encode " + err.Error())
	}
	if n.Kind == yaml.SequenceNode {
		flow(n)
	}
	return n
}

func flow(n *yaml.Node) {
	n.Style |= yaml.FlowStyle
	for _, c := range n.Content {
		flow(c)
	}
}

// orderedMap is a YAML mapping whose keys keep their order and may contain
// dots (table names).
type orderedMap struct{ keys, values []any }

func (o *orderedMap) add(k string, v any) {
	o.keys = append(o.keys, k)
	o.values = append(o.values, v)
}

func (o *orderedMap) node() *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i, k := range o.keys {
		n.Content = append(n.Content, valueNode(k), valueNode(o.values[i]))
	}
	return n
}

// encode writes the tree with head as the leading comment block.
func (t *yamlTree) encode(head string) ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{t.root}, HeadComment: head}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
