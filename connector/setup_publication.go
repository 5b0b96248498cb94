package connector

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/mooncdc/mooncdc/connector/pgsource"
)

// ensurePublication creates the pipeline's publication if it is missing,
// reporting the selected tables it leaves out.
func (p *Pipeline) ensurePublication(ctx context.Context, db *pgx.Conn) error {
	keyless, err := pgsource.EnsurePublication(ctx, db, p.cfg.Postgres.Publication, p.tables, p.cfg.Postgres.PublishViaPartitionRoot)
	if err != nil {
		return err
	}
	p.keyless.Report(p.log, keyless)
	return nil
}
