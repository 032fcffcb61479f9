-- Schema 12: every chain the cluster's audit log ever had (audit::roster). A chain opened
-- from now on takes the next ordinal with a MAC linking it to the chain before it, and each
-- head names the highest ordinal its writer saw (`known`, under the head's MAC), so a
-- deleted chain shows as a gap, a broken link or a head that knew of more chains.
ALTER TABLE audit_chains
    ADD COLUMN ordinal  BIGINT UNIQUE,
    ADD COLUMN link_mac TEXT,
    ADD COLUMN known    BIGINT;
