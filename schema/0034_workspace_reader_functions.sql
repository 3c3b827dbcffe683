-- Per-workspace Grafana readers (schema/0030) get their own copy of every function Grafana's role
-- may call that takes a `workspaces` filter — the kalypso_delivery_* functions of the Delivery
-- dashboard as well as kalypso_transition_counts — instead of that one alone, so the Delivery
-- dashboard works for a team instead of failing closed. Each copy in the team's schema calls the
-- hub's function with the team's workspaces in place of the `workspaces` argument (those of the
-- dashboard's variable that are the team's; all of the team's for All), every other argument passed
-- on as given. The copies are made from the catalog, not written out here: a later migration that
-- changes a function's arguments or columns (the delivery functions are being rewritten) is followed
-- when an administrator runs kalypso_workspace_reader again, as after any upgrade.
CREATE OR REPLACE FUNCTION kalypso_workspace_reader(reader name, workspaces text[]) RETURNS name
LANGUAGE plpgsql AS $$
DECLARE
  home name := current_schema();
  -- Postgres names are at most 63 bytes: a long role name gives a schema named after its hash.
  own name := CASE WHEN length('kalypso_ws_' || reader) <= 63 THEN 'kalypso_ws_' || reader ELSE 'kalypso_ws_' || md5(reader) END;
  view_name name;
  fn record;
  args text[];
  input int;
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
  -- The team's functions are made anew: one whose arguments or columns changed cannot be replaced in place.
  FOR fn IN SELECT p.oid::regprocedure AS signature FROM pg_proc p WHERE p.pronamespace = to_regnamespace(quote_ident(own)) LOOP
    EXECUTE format('DROP FUNCTION %s', fn.signature);
  END LOOP;
  -- Grafana's role is granted a function by name (never through PUBLIC); those with a `workspaces`
  -- argument answer for the workspaces they are given. The team's copy runs with its creator's
  -- rights, as the hub's runs with its owner's: the team is granted only the copy.
  FOR fn IN
    SELECT p.oid, p.proname, p.proretset, p.provolatile, p.proargnames, p.proargmodes
      FROM pg_proc p
     WHERE p.pronamespace = to_regnamespace(quote_ident(home)) AND p.proname LIKE 'kalypso\_%' AND p.prokind = 'f'
       AND 'workspaces' = ANY (p.proargnames)
       AND EXISTS (SELECT 1 FROM aclexplode(p.proacl) a JOIN pg_roles r ON r.oid = a.grantee
                    WHERE r.rolname = 'kalypso_reader' AND a.privilege_type = 'EXECUTE')
  LOOP
    args := ARRAY[]::text[];
    input := 0;
    FOR i IN 1 .. cardinality(fn.proargnames) LOOP
      -- Input arguments only (a TABLE function lists its columns among the names too).
      CONTINUE WHEN fn.proargmodes IS NOT NULL AND fn.proargmodes[i] NOT IN ('i', 'b', 'v');
      input := input + 1;
      args := args || CASE WHEN fn.proargnames[i] = 'workspaces'
                           THEN format('ARRAY(SELECT w FROM unnest(%L::text[]) AS team(w) WHERE $%s IS NULL OR w = ANY ($%s))', workspaces, input, input)
                           ELSE '$' || input END;
    END LOOP;
    EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE sql %s SECURITY DEFINER SET search_path = %I AS %L',
                   own, fn.proname, pg_get_function_arguments(fn.oid), pg_get_function_result(fn.oid),
                   CASE fn.provolatile WHEN 'i' THEN 'IMMUTABLE' WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END, home,
                   format(CASE WHEN fn.proretset THEN 'SELECT * FROM %I.%I(%s)' ELSE 'SELECT %I.%I(%s)' END, home, fn.proname, array_to_string(args, ', ')));
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %I.%I(%s) FROM PUBLIC', own, fn.proname, pg_get_function_identity_arguments(fn.oid));
    EXECUTE format('GRANT EXECUTE ON FUNCTION %I.%I(%s) TO %I', own, fn.proname, pg_get_function_identity_arguments(fn.oid), reader);
  END LOOP;
  EXECUTE format('CREATE OR REPLACE VIEW %I.kalypso_settings AS SELECT * FROM %I.kalypso_settings', own, home);
  EXECUTE format('GRANT SELECT ON %I.kalypso_settings TO %I', own, reader);
  -- The hub's schema after the team's: its views are shadowed by the team's (and not granted), while
  -- functions the dashboards call are found and run with the team's rights.
  EXECUTE format('ALTER ROLE %I SET search_path = %I, %I', reader, own, home);
  RETURN own;
END $$;

-- An administrator's tool: it creates roles and schemas, which no reader should try.
REVOKE EXECUTE ON FUNCTION kalypso_workspace_reader(name, text[]) FROM PUBLIC;
