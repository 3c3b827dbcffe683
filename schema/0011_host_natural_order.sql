-- Hosts in natural order (issue 19): aks-dev-2 < aks-dev-10 < aks-dev-100, as people number their
-- clusters, where text order gives aks-dev-10 < aks-dev-100 < aks-dev-2. The hosts API pages by it.
--
-- A stored sort key, not an ICU collation with numeric ordering (`und-u-kn-true`). The embedded
-- PostgreSQL has ICU, but an external PostgreSQL 14+ need not be built with it, and an index in an
-- ICU collation goes silently out of order when the server's ICU library is upgraded (PostgreSQL
-- only warns that the collation version changed; the REINDEX is left to the operator). This key is
-- computed from the name alone by an immutable function and compared bytewise (COLLATE "C"), so
-- its order depends on no library and no locale of the server.
--
-- The key: every run of ASCII digits becomes its length in three digits (names are at most 253
-- characters) and the digits without leading zeros, so that numbers compare by value whatever their
-- width; everything else is lower-cased (AKS-dev-3 sorts between aks-dev-2 and aks-dev-4). In
-- bytes, the encoded digits sort where the digits did: after `-`, `.` and `/`, before letters.
-- Names that differ only in case or leading zeros share a key; the name breaks the tie, so
-- (name_sort_key, name) orders every host exactly once — which keyset paging needs.
CREATE FUNCTION kalypso_name_sort_key(name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN coalesce((
  SELECT string_agg(CASE WHEN m.part[1] ~ '^[0-9]' THEN lpad(length(ltrim(m.part[1], '0'))::text, 3, '0') || ltrim(m.part[1], '0')
                         ELSE lower(m.part[1]) END, '' ORDER BY m.n)
    FROM regexp_matches(name, '[0-9]+|[^0-9]+', 'g') WITH ORDINALITY AS m(part, n)), '');

-- Stored: computed once per host (hosts are created rarely and renamed never), while every page of
-- the hosts list reads it. A page is an index range scan on (name_sort_key, name) from the cursor,
-- at 20,000 hosts as at 20.
ALTER TABLE host ADD COLUMN name_sort_key text COLLATE "C" NOT NULL GENERATED ALWAYS AS (kalypso_name_sort_key(name)) STORED;
CREATE INDEX host_in_natural_order ON host (name_sort_key, name);
