-- +goose Up
-- The install key that keys every compute provider's config hashes was
-- named for Docker, its first user. It is copied under a neutral name, so
-- that the hashes of running workloads still match and no provider
-- replaces them. The old row stays for the replicas of earlier versions
-- during a rolling upgrade: without it they would make a new key, and
-- replace every workload they reconcile.
INSERT INTO install_keys (name, key, created_at)
SELECT 'provider-config-hash', key, created_at FROM install_keys WHERE name = 'docker-config-hash'
ON CONFLICT (name) DO NOTHING;

-- +goose Down
INSERT INTO install_keys (name, key, created_at)
SELECT 'docker-config-hash', key, created_at FROM install_keys WHERE name = 'provider-config-hash'
ON CONFLICT (name) DO NOTHING;
DELETE FROM install_keys WHERE name = 'provider-config-hash';
