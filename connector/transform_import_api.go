package connector

import "github.com/mooncdc/mooncdc/connector/internal/transform"

// The names of connector/internal/transform that import-debezium
// (cmd/mooncdc) uses to map a Kafka Connect transform chain.

// TransformTypes returns the Kafka Connect transform classes mooncdc runs
// in its transforms chain, sorted.
func TransformTypes() []string { return transform.Types() }

// PredicateTypes returns the Kafka Connect predicate classes mooncdc runs,
// sorted.
func PredicateTypes() []string { return transform.PredicateTypes() }

// ValidateTransforms parses Kafka Connect's transform and predicate keys
// (transforms, transforms.<alias>.*, predicates, predicates.<alias>.*) as
// the transforms chain does when mooncdc starts; the error names each bad
// key. It reads nothing else and starts nothing.
func ValidateTransforms(props map[string]string) error {
	_, err := transform.Parse(props)
	return err
}

// ScriptTranslation is a Debezium Groovy or JavaScript expression in CEL.
type ScriptTranslation = transform.ScriptTranslation

// Debezium's expression languages TranslateScript reads.
const (
	ScriptGroovy     = transform.LangGroovy
	ScriptJavaScript = transform.LangJS
)

// TranslateScript translates a Debezium Filter condition (topicExpr
// false) or ContentBasedRouter topic expression (true) written in
// language to CEL, where the translation is mechanical; otherwise the
// error names the expression, the offset and why.
func TranslateScript(language, src string, topicExpr bool) (*ScriptTranslation, error) {
	return transform.TranslateScript(language, src, topicExpr)
}
