-- The Django tables the operational tasks touch, with the columns and types of Smarter's migrations
-- (smarter-contract.md §7), as Django's MySQL backend creates them on MariaDB: BIGINT AUTO_INCREMENT ids,
-- DATETIME(6) timestamps, JSON (LONGTEXT with a JSON_VALID check), InnoDB foreign keys.
CREATE TABLE auth_user (
  id INT AUTO_INCREMENT PRIMARY KEY,
  username VARCHAR(150) NOT NULL UNIQUE,
  email VARCHAR(254) NOT NULL DEFAULT '',
  is_staff TINYINT(1) NOT NULL DEFAULT 0,
  is_superuser TINYINT(1) NOT NULL DEFAULT 0,
  is_active TINYINT(1) NOT NULL DEFAULT 1
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_account (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  account_number VARCHAR(255) NOT NULL UNIQUE,
  company_name VARCHAR(255) NOT NULL DEFAULT ''
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_userprofile (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  user_id INT NOT NULL,
  account_id BIGINT NOT NULL,
  UNIQUE KEY (user_id, account_id),
  FOREIGN KEY (user_id) REFERENCES auth_user (id),
  FOREIGN KEY (account_id) REFERENCES account_account (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_accountcontact (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  first_name VARCHAR(255) NOT NULL,
  last_name VARCHAR(255) NOT NULL,
  email VARCHAR(254) NOT NULL,
  phone VARCHAR(20) NULL,
  is_primary TINYINT(1) NOT NULL DEFAULT 0,
  welcomed TINYINT(1) NOT NULL DEFAULT 0,
  is_test TINYINT(1) NOT NULL DEFAULT 0,
  account_id BIGINT NOT NULL,
  FOREIGN KEY (account_id) REFERENCES account_account (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- llmclient 0001 (TimestampedModel), 0006 (ownership, verification_status/verified_at/verification_message
-- in place of is_verified, aws_hosted_zone_id blank default '').
CREATE TABLE llmclient_llmclientcustomdomain (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  aws_hosted_zone_id VARCHAR(255) NOT NULL DEFAULT '',
  domain_name VARCHAR(255) NOT NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL DEFAULT '1.0.0',
  annotations JSON NULL,
  user_profile_id BIGINT NOT NULL,
  verification_status VARCHAR(32) NOT NULL DEFAULT 'Not Verified',
  verified_at DATETIME(6) NULL,
  verification_message VARCHAR(1024) NOT NULL DEFAULT '',
  UNIQUE KEY (user_profile_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE llmclient_llmclientcustomdomaindns (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  record_name VARCHAR(255) NOT NULL,
  record_type VARCHAR(255) NOT NULL,
  record_value VARCHAR(255) NOT NULL,
  record_ttl INT NULL DEFAULT 600,
  custom_domain_id BIGINT NOT NULL,
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (custom_domain_id) REFERENCES llmclient_llmclientcustomdomain (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- llmclient 0001/0002: the columns the tasks read and write (the UI columns are left out).
CREATE TABLE llmclient_llmclient (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL DEFAULT '1.0.0',
  user_profile_id BIGINT NOT NULL,
  deployed TINYINT(1) NULL DEFAULT 0,
  dns_verification_status VARCHAR(255) NULL DEFAULT 'Not Verified',
  tls_certificate_issuance_status VARCHAR(255) NULL DEFAULT 'No Certificate',
  custom_domain_id BIGINT NULL UNIQUE,
  subdomain_id BIGINT NULL UNIQUE,
  UNIQUE KEY (user_profile_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id),
  FOREIGN KEY (custom_domain_id) REFERENCES llmclient_llmclientcustomdomain (id) ON DELETE CASCADE,
  FOREIGN KEY (subdomain_id) REFERENCES llmclient_llmclientcustomdomaindns (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE prompt_prompt (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL DEFAULT '1.0.0',
  annotations JSON NULL,
  session_key VARCHAR(255) NOT NULL UNIQUE,
  ip_address CHAR(39) NULL,
  user_agent VARCHAR(255) NULL,
  url VARCHAR(200) NULL,
  llmclient_id BIGINT NOT NULL,
  user_profile_id BIGINT NULL,
  UNIQUE KEY (session_key, url),
  FOREIGN KEY (llmclient_id) REFERENCES llmclient_llmclient (id),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE prompt_prompthistory (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  request JSON NULL,
  response JSON NULL,
  messages JSON NULL,
  prompt_id BIGINT NOT NULL,
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (prompt_id) REFERENCES prompt_prompt (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE plugin_pluginmeta (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  account_id BIGINT NULL,
  FOREIGN KEY (account_id) REFERENCES account_account (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE plugin_pluginselector (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  directive VARCHAR(255) NOT NULL DEFAULT 'search_terms',
  search_terms JSON NULL,
  plugin_id BIGINT NOT NULL UNIQUE,
  FOREIGN KEY (plugin_id) REFERENCES plugin_pluginmeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE plugin_pluginselectorhistory (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  search_term VARCHAR(255) NULL DEFAULT '',
  messages JSON NULL,
  session_key VARCHAR(255) NULL DEFAULT '',
  plugin_selector_id BIGINT NOT NULL,
  FOREIGN KEY (plugin_selector_id) REFERENCES plugin_pluginselector (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE prompt_prompttoolcall (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  function_name VARCHAR(255) NULL,
  function_args VARCHAR(255) NULL,
  request JSON NULL,
  response JSON NULL,
  prompt_id BIGINT NOT NULL,
  plugin_id BIGINT NULL,
  FOREIGN KEY (prompt_id) REFERENCES prompt_prompt (id) ON DELETE CASCADE,
  FOREIGN KEY (plugin_id) REFERENCES plugin_pluginmeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE prompt_promptpluginusage (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  input_text LONGTEXT NULL,
  prompt_id BIGINT NOT NULL,
  plugin_id BIGINT NOT NULL,
  FOREIGN KEY (prompt_id) REFERENCES prompt_prompt (id) ON DELETE CASCADE,
  FOREIGN KEY (plugin_id) REFERENCES plugin_pluginmeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_charge (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  resource_locator VARCHAR(255) NOT NULL,
  charge_type VARCHAR(20) NOT NULL DEFAULT 'completion',
  prompt_tokens INT NOT NULL,
  completion_tokens INT NOT NULL,
  total_tokens INT NOT NULL,
  total_cost DECIMAL(18,8) NOT NULL DEFAULT 0,
  KEY (resource_locator), KEY (created_at), KEY (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_aggregatedcharges (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  year SMALLINT NOT NULL, month SMALLINT NOT NULL, day SMALLINT NOT NULL, hour SMALLINT NOT NULL,
  resource_locator VARCHAR(255) NOT NULL,
  charge_type VARCHAR(20) NOT NULL,
  records INT NOT NULL,
  prompt_tokens INT NOT NULL,
  completion_tokens INT NOT NULL,
  total_tokens INT NOT NULL,
  total_cost DECIMAL(18,5) NOT NULL DEFAULT 0,
  KEY (resource_locator)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_llmprices (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  charge_type VARCHAR(20) NOT NULL,
  provider VARCHAR(255) NOT NULL,
  model VARCHAR(255) NOT NULL,
  price DECIMAL(10,6) NOT NULL,
  UNIQUE KEY (charge_type, provider, model)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_budget (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL UNIQUE,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL DEFAULT '1.0.0',
  annotations JSON NULL,
  duration INT UNSIGNED NOT NULL DEFAULT 0,
  periodic_limit DECIMAL(14,2) NOT NULL DEFAULT 0,
  absolute_limit DECIMAL(14,2) NOT NULL DEFAULT 0,
  action VARCHAR(10) NOT NULL DEFAULT 'block',
  message LONGTEXT NOT NULL,
  period VARCHAR(10) NOT NULL DEFAULT 'month',
  unit VARCHAR(10) NOT NULL DEFAULT 'cost',
  warning_threshold SMALLINT UNSIGNED NOT NULL DEFAULT 80
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_resourceconstraint (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  resource_locator VARCHAR(255) NOT NULL,
  budget_id BIGINT NULL,
  exceeded_at DATETIME(6) NULL,
  warned_at DATETIME(6) NULL,
  is_active TINYINT(1) NOT NULL DEFAULT 1,
  start_date DATETIME(6) NOT NULL,
  KEY (resource_locator),
  UNIQUE KEY (budget_id, resource_locator),
  FOREIGN KEY (budget_id) REFERENCES account_budget (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE account_resourcelock (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  resource_locator VARCHAR(255) NOT NULL,
  expiration_date DATETIME(6) NULL,
  resource_constraint_id BIGINT NOT NULL,
  reason LONGTEXT NOT NULL,
  KEY (resource_locator),
  FOREIGN KEY (resource_constraint_id) REFERENCES account_resourceconstraint (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE llmclient_llmclientrequests (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  request JSON NULL,
  session_key VARCHAR(255) NULL,
  is_aggregation TINYINT(1) NULL DEFAULT 0,
  llmclient_id BIGINT NOT NULL,
  FOREIGN KEY (llmclient_id) REFERENCES llmclient_llmclient (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE llmhost_llmhostcompute (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  user_profile_id BIGINT NOT NULL,
  desired_nodes INT NOT NULL DEFAULT 0,
  ready_nodes INT NOT NULL DEFAULT 0,
  price_per_hour DECIMAL(10,4) NULL,
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE guardrail_guardrailevent (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  disposition VARCHAR(20) NOT NULL,
  reviewed TINYINT(1) NOT NULL DEFAULT 0,
  KEY (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- connection 0001 (ApiConnection, a child of ConnectionBase: its primary key is connectionbase_ptr_id). Only read,
-- for a managed vectorstore's URL and API key Secret; ConnectionBase's own table is not part of this schema.
CREATE TABLE connection_apiconnection (
  connectionbase_ptr_id BIGINT NOT NULL PRIMARY KEY,
  base_url VARCHAR(200) NOT NULL,
  auth_method VARCHAR(50) NULL,
  timeout INT NULL,
  proxy_protocol VARCHAR(10) NULL,
  proxy_host VARCHAR(255) NULL,
  proxy_port INT NULL,
  proxy_username VARCHAR(255) NULL,
  api_key_id BIGINT NULL,
  proxy_password_id BIGINT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- vectorstore (line B's models: models/vectorstore_meta.py, document.py, snapshot.py). VectorstoreMeta is a
-- MetaDataWithOwnershipModel (name, description, version, user_profile) on a TimestampedModel. Its ForeignKeys to
-- ApiConnection, Provider and Secret are kept as the nullable *_id columns Django writes, without the FOREIGN KEY,
-- since those apps' tables are not part of this schema; tags and annotations are not read by any task.
CREATE TABLE vectorstore_vectorstoremeta (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL DEFAULT '1.0.0',
  user_profile_id BIGINT NOT NULL,
  spec JSON NOT NULL DEFAULT ('{}') CHECK (JSON_VALID(spec)),
  backend VARCHAR(50) NOT NULL,
  hosting VARCHAR(20) NOT NULL DEFAULT 'managed',
  connection_id BIGINT NULL,
  is_active TINYINT(1) NOT NULL DEFAULT 1,
  dimension INT UNSIGNED NOT NULL DEFAULT 1536,
  metric VARCHAR(20) NOT NULL DEFAULT 'cosine',
  deletion_protection TINYINT(1) NOT NULL DEFAULT 0,
  embeddings_provider_id BIGINT NULL,
  embeddings_model VARCHAR(255) NOT NULL DEFAULT '',
  status VARCHAR(20) NOT NULL DEFAULT 'pending',
  status_message LONGTEXT NOT NULL DEFAULT '',
  index_name VARCHAR(255) NOT NULL DEFAULT '',
  endpoint_url VARCHAR(255) NOT NULL DEFAULT '',
  api_key_secret_id BIGINT NULL,
  vector_count BIGINT NOT NULL DEFAULT 0,
  stats JSON NOT NULL DEFAULT ('{}') CHECK (JSON_VALID(stats)),
  deployed_at DATETIME(6) NULL,
  last_checked_at DATETIME(6) NULL,
  last_snapshot_at DATETIME(6) NULL,
  last_maintenance_at DATETIME(6) NULL,
  UNIQUE KEY (user_profile_id, name),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE vectorstore_vectorstoredocument (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  vectorstore_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  source VARCHAR(10) NOT NULL,
  content_type VARCHAR(100) NOT NULL DEFAULT '',
  content LONGTEXT NOT NULL,
  sha256 VARCHAR(64) NOT NULL,
  size_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,
  metadata JSON NOT NULL DEFAULT ('{}') CHECK (JSON_VALID(metadata)),
  status VARCHAR(10) NOT NULL DEFAULT 'pending',
  status_message LONGTEXT NOT NULL DEFAULT '',
  chunk_count INT UNSIGNED NOT NULL DEFAULT 0,
  loaded_at DATETIME(6) NULL,
  UNIQUE KEY (vectorstore_id, sha256),
  FOREIGN KEY (vectorstore_id) REFERENCES vectorstore_vectorstoremeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE vectorstore_vectorstoresnapshot (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  vectorstore_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  status VARCHAR(10) NOT NULL DEFAULT 'creating',
  status_message LONGTEXT NOT NULL DEFAULT '',
  size_bytes BIGINT UNSIGNED NULL,
  vector_count BIGINT NULL,
  scheduled TINYINT(1) NOT NULL DEFAULT 1,
  FOREIGN KEY (vectorstore_id) REFERENCES vectorstore_vectorstoremeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- llmhost and infrastructure apps (LLMHost and inventory tasks): llmhost migrations 0001_initial and
-- 0002_kubernetes_hosting, infrastructure 0001_initial. The compute table above (charge_llmhost_computes) gets
-- the rest of its columns here, so this block stays self-contained. Its price_per_hour is declared above, as
-- migration 0002 @ 860800a declares it: DECIMAL(10,4), so 1.25 × 2 nodes comes back as "2.5000", as in Python.
ALTER TABLE llmhost_llmhostcompute
  ADD COLUMN description LONGTEXT NULL,
  ADD COLUMN version VARCHAR(255) NULL DEFAULT '1.0.0',
  ADD COLUMN annotations JSON NULL,
  ADD COLUMN spec JSON NULL,
  ADD COLUMN instance_type VARCHAR(50) NOT NULL DEFAULT '',
  ADD COLUMN cpu INT UNSIGNED NOT NULL DEFAULT 1,
  ADD COLUMN memory_gb INT UNSIGNED NOT NULL DEFAULT 1,
  ADD COLUMN gpu_type VARCHAR(50) NOT NULL DEFAULT '',
  ADD COLUMN gpu_count SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN gpu_memory_gb INT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN max_nodes SMALLINT UNSIGNED NOT NULL DEFAULT 4,
  ADD COLUMN nodegroup_status VARCHAR(20) NOT NULL DEFAULT 'absent',
  ADD COLUMN status_message LONGTEXT NOT NULL DEFAULT (''),
  ADD COLUMN last_reconciled_at DATETIME(6) NULL,
  ADD UNIQUE KEY llmhost_compute_profile_name (user_profile_id, name);

CREATE TABLE llmhost_llmhost (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL DEFAULT '1.0.0',
  annotations JSON NULL,
  model_repository VARCHAR(255) NOT NULL DEFAULT '',
  model_revision VARCHAR(64) NOT NULL DEFAULT '',
  license VARCHAR(100) NOT NULL DEFAULT '',
  model_architecture VARCHAR(100) NOT NULL DEFAULT '',
  parameter_count BIGINT NULL,
  context_window INT UNSIGNED NULL,
  quantization VARCHAR(20) NOT NULL DEFAULT 'none',
  embedding_dimensions INT UNSIGNED NULL,
  supports_streaming TINYINT(1) NOT NULL DEFAULT 1,
  supports_function_calling TINYINT(1) NOT NULL DEFAULT 0,
  supports_vision TINYINT(1) NOT NULL DEFAULT 0,
  supports_reasoning TINYINT(1) NOT NULL DEFAULT 0,
  inference_engine VARCHAR(20) NOT NULL DEFAULT 'vllm',
  api_format VARCHAR(20) NOT NULL DEFAULT 'openai_compatible',
  endpoint_url VARCHAR(200) NOT NULL DEFAULT '',
  public_url VARCHAR(200) NOT NULL DEFAULT '',
  gpu_type VARCHAR(50) NOT NULL DEFAULT '',
  gpu_count SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  vram_required_gb INT UNSIGNED NULL,
  status VARCHAR(20) NOT NULL DEFAULT 'inactive',
  status_message LONGTEXT NOT NULL DEFAULT (''),
  is_active TINYINT(1) NOT NULL DEFAULT 1,
  health_check_url VARCHAR(200) NOT NULL DEFAULT '',
  last_health_check_at DATETIME(6) NULL,
  last_health_ok TINYINT(1) NULL,
  cost_per_hour DECIMAL(10,4) NULL,
  model_source VARCHAR(20) NOT NULL DEFAULT 'huggingface',
  model_task VARCHAR(20) NOT NULL DEFAULT 'text-generation',
  served_model_name VARCHAR(255) NOT NULL DEFAULT '',
  spec JSON NULL,
  replicas SMALLINT UNSIGNED NOT NULL DEFAULT 1,
  ready_replicas SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  deployed_at DATETIME(6) NULL,
  -- FK to secret_secret (not in this schema: the worker never reads Smarter's Secrets).
  api_key_secret_id BIGINT NULL,
  compute_id BIGINT NULL,
  user_profile_id BIGINT NOT NULL,
  UNIQUE KEY llmhost_profile_name (user_profile_id, name),
  KEY (status),
  FOREIGN KEY (compute_id) REFERENCES llmhost_llmhostcompute (id),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE llmhost_llmhostevent (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  llmhost_name VARCHAR(255) NOT NULL,
  event_type VARCHAR(20) NOT NULL,
  status VARCHAR(20) NOT NULL,
  message LONGTEXT NOT NULL DEFAULT (''),
  details JSON NULL,
  llmhost_id BIGINT NULL,
  KEY llmhost_llm_llmhost_8af935_idx (llmhost_id, event_type),
  FOREIGN KEY (llmhost_id) REFERENCES llmhost_llmhost (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE infrastructure_infrastructureresource (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  provider VARCHAR(32) NOT NULL,
  service VARCHAR(32) NOT NULL,
  resource_type VARCHAR(64) NOT NULL,
  resource_name VARCHAR(255) NOT NULL,
  resource_id VARCHAR(512) NOT NULL DEFAULT '',
  billable TINYINT(1) NOT NULL DEFAULT 0,
  status VARCHAR(16) NOT NULL DEFAULT 'active',
  destroyed_at DATETIME(6) NULL,
  KEY infrastruct_provide_01a2bb_idx (provider, resource_type, resource_name),
  KEY infrastruct_status_c33cc2_idx (status, billable)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- ---------------------------------------------------------------------------------------------------------
-- mcpclient and provider (refresh_mcpclient(s), verify_provider(_model)), and the Secret both read.
-- secret 0001: MetaDataWithOwnershipModel + encrypted_value (Fernet token, BinaryField → LONGBLOB).
CREATE TABLE IF NOT EXISTS secret_secret (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  user_profile_id BIGINT NOT NULL,
  last_accessed DATETIME(6) NULL,
  expires_at DATETIME(6) NULL,
  encrypted_value LONGBLOB NOT NULL,
  UNIQUE KEY (user_profile_id, name),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- mcpclient 0001 + 0002_connection_fields_and_status (config removed; headers, timeout, cache_ttl,
-- api_key_header, include_instructions, last_connected_at, last_error, server_name/version, tools added).
CREATE TABLE mcpclient_mcpclient (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  user_profile_id BIGINT NOT NULL,
  transport VARCHAR(16) NULL DEFAULT 'http',
  endpoint_url VARCHAR(2048) NULL,
  command VARCHAR(255) NULL,
  auth_type VARCHAR(16) NOT NULL DEFAULT 'none',
  credentials_id BIGINT NULL,
  api_key_header VARCHAR(64) NOT NULL DEFAULT 'X-API-Key',
  headers JSON NULL,
  timeout SMALLINT UNSIGNED NOT NULL DEFAULT 30,
  cache_ttl INT UNSIGNED NOT NULL DEFAULT 300,
  include_instructions TINYINT(1) NOT NULL DEFAULT 1,
  allowed_tools JSON NULL,
  allowed_resources JSON NULL,
  is_active TINYINT(1) NOT NULL DEFAULT 1,
  status VARCHAR(16) NOT NULL DEFAULT 'unconfigured',
  priority SMALLINT UNSIGNED NOT NULL DEFAULT 100,
  protocol_version VARCHAR(16) NULL,
  server_name VARCHAR(255) NULL,
  server_version VARCHAR(64) NULL,
  last_connected_at DATETIME(6) NULL,
  last_error LONGTEXT NULL,
  tools JSON NULL,
  UNIQUE KEY (user_profile_id, name),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE,
  FOREIGN KEY (credentials_id) REFERENCES secret_secret (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- provider 0001/0002 (main @ 0.14.19): the columns the test bank reads and writes (logo is an ImageField path).
CREATE TABLE provider_provider (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  user_profile_id BIGINT NOT NULL,
  status VARCHAR(255) NOT NULL DEFAULT 'unverified',
  is_default TINYINT(1) NOT NULL DEFAULT 0,
  is_active TINYINT(1) NOT NULL DEFAULT 0,
  is_verified TINYINT(1) NOT NULL DEFAULT 0,
  is_featured TINYINT(1) NOT NULL DEFAULT 0,
  is_deprecated TINYINT(1) NOT NULL DEFAULT 0,
  is_flagged TINYINT(1) NOT NULL DEFAULT 0,
  is_suspended TINYINT(1) NOT NULL DEFAULT 0,
  base_url VARCHAR(255) NULL,
  api_key_id BIGINT NULL,
  default_model VARCHAR(255) NULL,
  connectivity_test_path VARCHAR(255) NULL DEFAULT '',
  logo VARCHAR(100) NULL,
  website_url VARCHAR(200) NULL,
  ownership_requested VARCHAR(254) NULL,
  contact_email VARCHAR(254) NULL,
  contact_email_verified DATETIME(6) NULL,
  support_email VARCHAR(254) NULL,
  support_email_verified DATETIME(6) NULL,
  docs_url VARCHAR(200) NULL,
  terms_of_service_url VARCHAR(200) NULL,
  privacy_policy_url VARCHAR(200) NULL,
  tos_accepted_at DATETIME(6) NULL,
  tos_accepted_by_id INT NULL,
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE,
  FOREIGN KEY (api_key_id) REFERENCES secret_secret (id) ON DELETE SET NULL,
  FOREIGN KEY (tos_accepted_by_id) REFERENCES auth_user (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE provider_providermodel (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  provider_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  is_default TINYINT(1) NOT NULL DEFAULT 0,
  is_active TINYINT(1) NOT NULL DEFAULT 0,
  is_deprecated TINYINT(1) NOT NULL DEFAULT 0,
  is_flagged TINYINT(1) NOT NULL DEFAULT 0,
  is_suspended TINYINT(1) NOT NULL DEFAULT 0,
  max_completion_tokens INT UNSIGNED NOT NULL DEFAULT 4096,
  temperature DOUBLE NOT NULL DEFAULT 0.7,
  top_p DOUBLE NOT NULL DEFAULT 1.0,
  supports_text_input TINYINT(1) NOT NULL DEFAULT 1,
  supports_text_generation TINYINT(1) NOT NULL DEFAULT 1,
  supports_translation TINYINT(1) NOT NULL DEFAULT 1,
  supports_summarization TINYINT(1) NOT NULL DEFAULT 1,
  supports_streaming TINYINT(1) NOT NULL DEFAULT 0,
  supports_tools TINYINT(1) NOT NULL DEFAULT 0,
  supports_image_input TINYINT(1) NOT NULL DEFAULT 0,
  supports_audio_input TINYINT(1) NOT NULL DEFAULT 0,
  supports_embedding TINYINT(1) NOT NULL DEFAULT 0,
  supports_fine_tuning TINYINT(1) NOT NULL DEFAULT 0,
  supports_search TINYINT(1) NOT NULL DEFAULT 0,
  supports_code_interpreter TINYINT(1) NOT NULL DEFAULT 0,
  supports_image_generation TINYINT(1) NOT NULL DEFAULT 0,
  supports_audio_generation TINYINT(1) NOT NULL DEFAULT 0,
  FOREIGN KEY (provider_id) REFERENCES provider_provider (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE provider_providerverification (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  provider_id BIGINT NOT NULL,
  verification_type VARCHAR(255) NOT NULL,
  is_successful TINYINT(1) NOT NULL DEFAULT 0,
  error_message LONGTEXT NULL,
  FOREIGN KEY (provider_id) REFERENCES provider_provider (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE provider_providermodelverification (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  provider_model_id BIGINT NOT NULL,
  verification_type VARCHAR(255) NOT NULL,
  is_successful TINYINT(1) NOT NULL DEFAULT 0,
  error_message LONGTEXT NULL,
  FOREIGN KEY (provider_model_id) REFERENCES provider_providermodel (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
