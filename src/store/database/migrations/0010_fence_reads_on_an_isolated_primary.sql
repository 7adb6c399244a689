-- Whether this server may answer a read as the primary: true, or an error (SQLSTATE SR503) when it
-- has synchronous standbys configured (synchronous_standby_names) and none is streaming from it. A
-- failover engine promotes a standby only after that standby has stopped streaming from the primary,
-- so a primary cut off from its failover engine (pg_auto_failover demotes it through its keeper, which
-- may be unreachable) goes on answering reads, without every write the promoted server acknowledged
-- since: a read there would answer wrongly (a 404 for an animal created). Such a server cannot
-- acknowledge a write either (each COMMIT waits for a synchronous standby), so it answers nothing.
-- A standby (reads routed to a replica), a server without synchronous standbys, and a user who may
-- not see the standbys' state (pg_read_all_stats, part of pg_monitor) pass: the check cannot tell there.
-- Reads (a page, a get) and a create's statement call it in their WHERE clause: with no column of a
-- row in it, PostgreSQL runs it once, before the scan, whether or not a row matches.
CREATE FUNCTION serving_primary() RETURNS boolean LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF current_setting('synchronous_standby_names') = '' THEN
    RETURN true;
  END IF;
  IF pg_is_in_recovery() OR NOT pg_has_role('pg_read_all_stats', 'USAGE') THEN
    RETURN true;
  END IF;
  IF EXISTS (SELECT FROM pg_stat_get_wal_senders() WHERE sync_state IN ('sync', 'quorum')) THEN
    RETURN true;
  END IF;
  RAISE EXCEPTION 'this server has synchronous standbys configured and none is streaming from it: a standby may have been promoted in its place'
    USING ERRCODE = 'SR503';
END
$$;
