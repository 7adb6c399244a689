export * from '../../scripts/lib/pgbouncer';
