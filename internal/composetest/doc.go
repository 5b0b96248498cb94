// Package composetest holds tests, run by `make test` without Docker, of the
// files that describe how mooncdc is deployed:
//
//   - docker-compose.yml: pinned images, the expected services and published
//     ports (as the README documents them), healthchecks for every service
//     others wait on, Postgres with wal_level=logical, and a mooncdc
//     environment that loads and validates as a connector.Config;
//   - Dockerfile: multi-stage, CGO_ENABLED=0, a non-root USER and the mooncdc
//     binary as ENTRYPOINT;
//   - deploy/kubernetes/mooncdc.yaml: two replicas with /readyz and /healthz
//     probes on the metrics port, the config and the password files
//     mounted where the config reads them, a grace period longer than
//     shutdown_timeout, a PodDisruptionBudget, and a config that validates;
//   - deploy/grafana/mooncdc.json: a well-formed dashboard whose queries use
//     only metrics the connector exports, so renaming a metric breaks a test.
//
// The package has no non-test code.
package composetest
