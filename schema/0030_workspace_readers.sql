-- Grafana and analysts scoped to workspaces (issue 39, item 4; docs/security.md). The hub's API
-- scopes its answers by the caller's workspaces; a database role cannot be asked who it is per
-- request, so each team gets a role of its own and a schema of its own holding one view per
-- kalypso_* view that has a workspace column, cut to the team's workspaces. The role's search_path
-- is that schema: the provisioned dashboards' unqualified `kalypso_environment_state` then reads the
-- team's view, so the same dashboards serve every team. Views of hosts without a workspace column
-- (kalypso_host_summary) keep the hosts that pull one of the team's targets (their counts are the
-- host's: a host shared with another team counts that team's reconcilers too). Other views without a
-- workspace column are left out (a panel on them fails for the team rather than showing every
-- workspace), except kalypso_settings, which holds no deployment data. Called again, it follows new views and a new
-- list of workspaces. Run by an administrator (it creates a role and a schema):
--   SELECT kalypso_workspace_reader('grafana_payments', ARRAY['payments']);
--   GRANT grafana_payments TO grafana_team_payments_login;
CREATE FUNCTION kalypso_workspace_reader(reader name, workspaces text[]) RETURNS name
LANGUAGE plpgsql AS $$
DECLARE
  home name := current_schema();
  -- Postgres names are at most 63 bytes: a long role name gives a schema named after its hash.
  own name := CASE WHEN length('kalypso_ws_' || reader) <= 63 THEN 'kalypso_ws_' || reader ELSE 'kalypso_ws_' || md5(reader) END;
  view_name name;
BEGIN
  IF workspaces IS NULL OR cardinality(workspaces) = 0 THEN
    RAISE EXCEPTION 'workspaces: name at least one workspace';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
    EXECUTE format('CREATE ROLE %I NOLOGIN', reader);
  END IF;
  EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', own);
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', own, reader);
  FOR view_name IN
    SELECT v.table_name FROM information_schema.views v
     WHERE v.table_schema = home AND v.table_name LIKE 'kalypso\_%'
       AND EXISTS (SELECT 1 FROM information_schema.columns c
                    WHERE c.table_schema = home AND c.table_name = v.table_name AND c.column_name = 'workspace')
  LOOP
    -- security_barrier: the workspace condition is applied before any function a query adds could see a row.
    EXECUTE format('CREATE OR REPLACE VIEW %I.%I WITH (security_barrier) AS SELECT * FROM %I.%I WHERE workspace = ANY(%L::text[])',
                   own, view_name, home, view_name, workspaces);
    EXECUTE format('GRANT SELECT ON %I.%I TO %I', own, view_name, reader);
  END LOOP;
  FOR view_name IN
    SELECT v.table_name FROM information_schema.views v
     WHERE v.table_schema = home AND v.table_name LIKE 'kalypso\_%'
       AND EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = home AND c.table_name = v.table_name AND c.column_name = 'host')
       AND NOT EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = home AND c.table_name = v.table_name AND c.column_name = 'workspace')
  LOOP
    EXECUTE format('CREATE OR REPLACE VIEW %I.%I WITH (security_barrier) AS SELECT * FROM %I.%I
                     WHERE host IN (SELECT hs.host FROM %I.kalypso_host_state hs WHERE hs.workspace = ANY(%L::text[]))',
                   own, view_name, home, view_name, home, workspaces);
    EXECUTE format('GRANT SELECT ON %I.%I TO %I', own, view_name, reader);
  END LOOP;
  -- The transition counts Grafana's State transitions panel reads (schema/0028) are a function over
  -- every workspace: the team's schema gets its own, which asks the hub's for the team's workspaces
  -- only (those of the dashboard's variable that are the team's; all of the team's for All). It runs
  -- with its creator's rights, as the hub's runs with its owner's: the team is granted only this one.
  EXECUTE format($f$CREATE OR REPLACE FUNCTION %I.kalypso_transition_counts(since timestamptz, until timestamptz,
                      environments text[] DEFAULT NULL, workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL)
                    RETURNS TABLE (bucket timestamptz, success bigint, failure bigint, in_progress bigint)
                    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = %I AS
                    $body$ SELECT * FROM %I.kalypso_transition_counts($1, $2, $3,
                             ARRAY(SELECT w FROM unnest(%L::text[]) AS team(w) WHERE $4 IS NULL OR w = ANY ($4)), $5) $body$ $f$,
                 own, home, home, workspaces);
  EXECUTE format('REVOKE EXECUTE ON FUNCTION %I.kalypso_transition_counts(timestamptz, timestamptz, text[], text[], text[]) FROM PUBLIC', own);
  EXECUTE format('GRANT EXECUTE ON FUNCTION %I.kalypso_transition_counts(timestamptz, timestamptz, text[], text[], text[]) TO %I', own, reader);
  EXECUTE format('CREATE OR REPLACE VIEW %I.kalypso_settings AS SELECT * FROM %I.kalypso_settings', own, home);
  EXECUTE format('GRANT SELECT ON %I.kalypso_settings TO %I', own, reader);
  -- The hub's schema after the team's: its views are shadowed by the team's (and not granted), while
  -- functions the dashboards call are found and run with the team's rights.
  EXECUTE format('ALTER ROLE %I SET search_path = %I, %I', reader, own, home);
  RETURN own;
END $$;

-- An administrator's tool: it creates roles and schemas, which no reader should try.
REVOKE EXECUTE ON FUNCTION kalypso_workspace_reader(name, text[]) FROM PUBLIC;
