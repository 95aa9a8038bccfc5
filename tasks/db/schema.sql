-- Smarter's Django tables, as Django's MySQL backend creates them on MariaDB from Smarter's migrations: BIGINT
-- AUTO_INCREMENT ids, DATETIME(6), JSON (MariaDB: LONGTEXT with a JSON_VALID check), LONGTEXT for TextField,
-- UNSIGNED for the Positive*Fields, InnoDB foreign keys.
--
-- A table the worker writes carries every column that Smarter's migrations give it, NOT NULL exactly where the
-- field has null=False, and no column DEFAULT: Django applies `default=` in Python and never leaves it in the
-- database. Under strict SQL mode (MariaDB's default) an INSERT that leaves out a NOT NULL column therefore fails
-- with error 1364, as it would on Smarter's database. spec/support/smarter-migrations*.ts hold the column lists,
-- with the migrations they come from.
--
-- The tables the worker only reads (auth_user, account_account, account_userprofile, account_accountcontact,
-- account_llmprices, account_budget, plugin_pluginmeta, plugin_pluginselector, guardrail_guardrailevent) keep
-- the columns the tasks read, with defaults for the tests' fixtures.
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

-- secret 0001_initial: a MetaDataWithOwnershipModel with the Fernet token of its value (BinaryField: LONGBLOB).
CREATE TABLE secret_secret (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  last_accessed DATETIME(6) NULL,
  expires_at DATETIME(6) NULL,
  encrypted_value LONGBLOB NOT NULL,
  user_profile_id BIGINT NOT NULL,
  UNIQUE KEY (user_profile_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- llmclient 0001_initial, 0002_initial, 0006_llmclientcustomdomain_ownership (ownership; verification_status,
-- verified_at and verification_message in place of is_verified).
CREATE TABLE llmclient_llmclientcustomdomain (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  aws_hosted_zone_id VARCHAR(255) NOT NULL,
  domain_name VARCHAR(255) NOT NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  user_profile_id BIGINT NOT NULL,
  verification_status VARCHAR(32) NOT NULL,
  verified_at DATETIME(6) NULL,
  verification_message VARCHAR(1024) NOT NULL,
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
  record_ttl INT NULL,
  custom_domain_id BIGINT NOT NULL,
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (custom_domain_id) REFERENCES llmclient_llmclientcustomdomain (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE llmclient_llmclient (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  deployed TINYINT(1) NULL,
  provider VARCHAR(255) NULL,
  default_model VARCHAR(255) NULL,
  default_system_role LONGTEXT NULL,
  default_temperature DOUBLE NULL,
  default_max_tokens INT NULL,
  app_name VARCHAR(255) NULL,
  app_assistant VARCHAR(255) NULL,
  app_welcome_message VARCHAR(255) NULL,
  app_example_prompts JSON NULL,
  app_placeholder VARCHAR(255) NULL,
  app_info_url VARCHAR(200) NULL,
  app_background_image_url VARCHAR(200) NULL,
  app_logo_url VARCHAR(200) NULL,
  app_file_attachment TINYINT(1) NULL,
  dns_verification_status VARCHAR(255) NULL,
  tls_certificate_issuance_status VARCHAR(255) NULL,
  user_profile_id BIGINT NOT NULL,
  custom_domain_id BIGINT NULL UNIQUE,
  subdomain_id BIGINT NULL UNIQUE,
  UNIQUE KEY (user_profile_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id),
  FOREIGN KEY (custom_domain_id) REFERENCES llmclient_llmclientcustomdomain (id) ON DELETE CASCADE,
  FOREIGN KEY (subdomain_id) REFERENCES llmclient_llmclientcustomdomaindns (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- prompt 0001_initial (the LLMClient foreign key as the llmclient app names it: llmclient_id).
CREATE TABLE prompt_prompt (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  session_key VARCHAR(255) NOT NULL UNIQUE,
  ip_address CHAR(39) NOT NULL,
  user_agent VARCHAR(255) NOT NULL,
  url VARCHAR(200) NOT NULL,
  llmclient_id BIGINT NOT NULL,
  user_profile_id BIGINT NOT NULL,
  UNIQUE KEY (session_key, url),
  KEY (created_at), KEY (updated_at),
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

-- plugin 0001_initial.
CREATE TABLE plugin_pluginselectorhistory (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  search_term VARCHAR(255) NULL,
  messages JSON NULL,
  session_key VARCHAR(255) NULL,
  plugin_selector_id BIGINT NOT NULL,
  KEY (created_at), KEY (updated_at),
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
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (prompt_id) REFERENCES prompt_prompt (id) ON DELETE CASCADE,
  FOREIGN KEY (plugin_id) REFERENCES plugin_pluginmeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE prompt_promptpluginusage (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  input_text LONGTEXT NULL,
  prompt_id BIGINT NOT NULL,
  plugin_id BIGINT NOT NULL,
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (prompt_id) REFERENCES prompt_prompt (id) ON DELETE CASCADE,
  FOREIGN KEY (plugin_id) REFERENCES plugin_pluginmeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- account 0001_initial, 0002_resourceconstraint_remove_charge_model_and_more, 0004_budget_enforcement (compute
-- charges; total_cost 18 digits; budgets on resource constraints; lock reasons), 0005_budget_unique_name.
CREATE TABLE account_charge (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  charge_type VARCHAR(20) NOT NULL,
  prompt_tokens INT NOT NULL,
  completion_tokens INT NOT NULL,
  total_tokens INT NOT NULL,
  resource_locator VARCHAR(255) NOT NULL,
  total_cost DECIMAL(18,8) NOT NULL,
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
  total_cost DECIMAL(18,5) NOT NULL,
  KEY (resource_locator), KEY (created_at), KEY (updated_at)
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
  is_active TINYINT(1) NOT NULL,
  start_date DATETIME(6) NOT NULL,
  warned_at DATETIME(6) NULL,
  KEY (resource_locator), KEY (created_at), KEY (updated_at),
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
  KEY (resource_locator), KEY (created_at), KEY (updated_at),
  FOREIGN KEY (resource_constraint_id) REFERENCES account_resourceconstraint (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- llmclient 0001_initial, 0002_initial.
CREATE TABLE llmclient_llmclientrequests (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  request JSON NULL,
  session_key VARCHAR(255) NULL,
  is_aggregation TINYINT(1) NULL,
  llmclient_id BIGINT NOT NULL,
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (llmclient_id) REFERENCES llmclient_llmclient (id) ON DELETE CASCADE
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

-- vectorstore: Smarter's vectorstore migration for these models could not be read; the columns
-- are those of its models (models/vectorstore_meta.py, document.py @b904c24, snapshot.py @f38edd0). VectorstoreMeta
-- is a MetaDataWithOwnershipModel. Its foreign keys to ApiConnection and Provider are the *_id columns Django
-- writes, without the FOREIGN KEY, since those apps' tables are not part of this schema.
CREATE TABLE vectorstore_vectorstoremeta (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  user_profile_id BIGINT NOT NULL,
  spec JSON NOT NULL,
  backend VARCHAR(50) NOT NULL,
  hosting VARCHAR(20) NOT NULL,
  connection_id BIGINT NULL,
  is_active TINYINT(1) NOT NULL,
  dimension INT UNSIGNED NOT NULL,
  metric VARCHAR(20) NOT NULL,
  deletion_protection TINYINT(1) NOT NULL,
  embeddings_provider_id BIGINT NULL,
  embeddings_model VARCHAR(255) NOT NULL,
  status VARCHAR(20) NOT NULL,
  status_message LONGTEXT NOT NULL,
  index_name VARCHAR(255) NOT NULL,
  endpoint_url VARCHAR(255) NOT NULL,
  api_key_secret_id BIGINT NULL,
  vector_count BIGINT NOT NULL,
  stats JSON NOT NULL,
  deployed_at DATETIME(6) NULL,
  last_checked_at DATETIME(6) NULL,
  last_snapshot_at DATETIME(6) NULL,
  last_maintenance_at DATETIME(6) NULL,
  UNIQUE KEY (user_profile_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id),
  FOREIGN KEY (api_key_secret_id) REFERENCES secret_secret (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE vectorstore_vectorstoredocument (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  vectorstore_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  source VARCHAR(10) NOT NULL,
  content_type VARCHAR(100) NOT NULL,
  content LONGTEXT NOT NULL,
  sha256 VARCHAR(64) NOT NULL,
  size_bytes BIGINT UNSIGNED NOT NULL,
  metadata JSON NOT NULL,
  status VARCHAR(10) NOT NULL,
  status_message LONGTEXT NOT NULL,
  chunk_count INT UNSIGNED NOT NULL,
  loaded_at DATETIME(6) NULL,
  UNIQUE KEY (vectorstore_id, sha256),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (vectorstore_id) REFERENCES vectorstore_vectorstoremeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE vectorstore_vectorstoresnapshot (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  vectorstore_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  status VARCHAR(10) NOT NULL,
  status_message LONGTEXT NOT NULL,
  size_bytes BIGINT UNSIGNED NULL,
  vector_count BIGINT NULL,
  scheduled TINYINT(1) NOT NULL,
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (vectorstore_id) REFERENCES vectorstore_vectorstoremeta (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- llmhost 0001_initial and 0002_kubernetes_hosting (which renames huggingface_repo_id/_revision to
-- model_repository/_revision, drops api_key, cloud_provider, deployment_type, engine_config, region and
-- instance_type, and adds LLMHostCompute, LLMHostEvent and the Kubernetes columns).
CREATE TABLE llmhost_llmhostcompute (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  spec JSON NOT NULL,
  instance_type VARCHAR(50) NOT NULL,
  cpu INT UNSIGNED NOT NULL,
  memory_gb INT UNSIGNED NOT NULL,
  gpu_type VARCHAR(50) NOT NULL,
  gpu_count SMALLINT UNSIGNED NOT NULL,
  gpu_memory_gb INT UNSIGNED NOT NULL,
  max_nodes SMALLINT UNSIGNED NOT NULL,
  price_per_hour DECIMAL(10,4) NULL,
  nodegroup_status VARCHAR(20) NOT NULL,
  desired_nodes SMALLINT UNSIGNED NOT NULL,
  ready_nodes SMALLINT UNSIGNED NOT NULL,
  status_message LONGTEXT NOT NULL,
  last_reconciled_at DATETIME(6) NULL,
  user_profile_id BIGINT NOT NULL,
  UNIQUE KEY llmhost_compute_profile_name (user_profile_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE llmhost_llmhost (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  model_repository VARCHAR(255) NOT NULL,
  model_revision VARCHAR(64) NOT NULL,
  license VARCHAR(100) NOT NULL,
  model_architecture VARCHAR(100) NOT NULL,
  parameter_count BIGINT NULL,
  context_window INT UNSIGNED NULL,
  quantization VARCHAR(20) NOT NULL,
  embedding_dimensions INT UNSIGNED NULL,
  supports_streaming TINYINT(1) NOT NULL,
  supports_function_calling TINYINT(1) NOT NULL,
  supports_vision TINYINT(1) NOT NULL,
  inference_engine VARCHAR(20) NOT NULL,
  api_format VARCHAR(20) NOT NULL,
  endpoint_url VARCHAR(200) NOT NULL,
  gpu_type VARCHAR(50) NOT NULL,
  gpu_count SMALLINT UNSIGNED NOT NULL,
  vram_required_gb INT UNSIGNED NULL,
  status VARCHAR(20) NOT NULL,
  is_active TINYINT(1) NOT NULL,
  health_check_url VARCHAR(200) NOT NULL,
  last_health_check_at DATETIME(6) NULL,
  last_health_ok TINYINT(1) NULL,
  cost_per_hour DECIMAL(10,4) NULL,
  user_profile_id BIGINT NOT NULL,
  api_key_secret_id BIGINT NULL,
  deployed_at DATETIME(6) NULL,
  model_source VARCHAR(20) NOT NULL,
  model_task VARCHAR(20) NOT NULL,
  public_url VARCHAR(200) NOT NULL,
  ready_replicas SMALLINT UNSIGNED NOT NULL,
  replicas SMALLINT UNSIGNED NOT NULL,
  served_model_name VARCHAR(255) NOT NULL,
  spec JSON NOT NULL,
  status_message LONGTEXT NOT NULL,
  supports_reasoning TINYINT(1) NOT NULL,
  compute_id BIGINT NULL,
  UNIQUE KEY llmhost_profile_name (user_profile_id, name),
  KEY (status), KEY (is_active), KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE,
  FOREIGN KEY (api_key_secret_id) REFERENCES secret_secret (id) ON DELETE SET NULL,
  FOREIGN KEY (compute_id) REFERENCES llmhost_llmhostcompute (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE llmhost_llmhostevent (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  llmhost_name VARCHAR(255) NOT NULL,
  event_type VARCHAR(20) NOT NULL,
  status VARCHAR(20) NOT NULL,
  message LONGTEXT NOT NULL,
  details JSON NOT NULL,
  llmhost_id BIGINT NULL,
  KEY llmhost_llm_llmhost_8af935_idx (llmhost_id, event_type),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (llmhost_id) REFERENCES llmhost_llmhost (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- infrastructure 0001_initial: the ledger.
CREATE TABLE infrastructure_infrastructureresource (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  provider VARCHAR(32) NOT NULL,
  service VARCHAR(32) NOT NULL,
  resource_type VARCHAR(64) NOT NULL,
  resource_name VARCHAR(255) NOT NULL,
  resource_id VARCHAR(512) NOT NULL,
  billable TINYINT(1) NOT NULL,
  status VARCHAR(16) NOT NULL,
  destroyed_at DATETIME(6) NULL,
  KEY infrastruct_provide_01a2bb_idx (provider, resource_type, resource_name),
  KEY infrastruct_status_c33cc2_idx (status, billable),
  KEY (created_at), KEY (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- mcpclient 0001_initial, 0002_connection_fields_and_status (config removed; headers, timeout, cache_ttl,
-- api_key_header, include_instructions, last_connected_at, last_error, server_name/version and tools added).
CREATE TABLE mcpclient_mcpclient (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  transport VARCHAR(16) NULL,
  endpoint_url VARCHAR(2048) NULL,
  command VARCHAR(255) NULL,
  auth_type VARCHAR(16) NOT NULL,
  allowed_tools JSON NULL,
  allowed_resources JSON NULL,
  is_active TINYINT(1) NOT NULL,
  status VARCHAR(16) NOT NULL,
  priority SMALLINT UNSIGNED NOT NULL,
  protocol_version VARCHAR(16) NULL,
  credentials_id BIGINT NULL,
  user_profile_id BIGINT NOT NULL,
  api_key_header VARCHAR(64) NOT NULL,
  cache_ttl INT UNSIGNED NOT NULL,
  headers JSON NULL,
  include_instructions TINYINT(1) NOT NULL,
  last_connected_at DATETIME(6) NULL,
  last_error LONGTEXT NULL,
  server_name VARCHAR(255) NULL,
  server_version VARCHAR(64) NULL,
  timeout SMALLINT UNSIGNED NOT NULL,
  tools JSON NULL,
  UNIQUE KEY (user_profile_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE,
  FOREIGN KEY (credentials_id) REFERENCES secret_secret (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- provider 0001_initial, 0002_initial (logo is an ImageField: the file's path).
CREATE TABLE provider_provider (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  version VARCHAR(255) NULL,
  annotations JSON NULL,
  status VARCHAR(32) NOT NULL,
  is_default TINYINT(1) NOT NULL,
  is_active TINYINT(1) NOT NULL,
  is_verified TINYINT(1) NOT NULL,
  is_featured TINYINT(1) NOT NULL,
  is_deprecated TINYINT(1) NOT NULL,
  is_flagged TINYINT(1) NOT NULL,
  is_suspended TINYINT(1) NOT NULL,
  base_url VARCHAR(255) NULL,
  default_model VARCHAR(255) NULL,
  connectivity_test_path VARCHAR(255) NULL,
  logo VARCHAR(100) NULL,
  website_url VARCHAR(255) NULL,
  ownership_requested VARCHAR(255) NULL,
  contact_email VARCHAR(255) NULL,
  contact_email_verified DATETIME(6) NULL,
  support_email VARCHAR(255) NULL,
  support_email_verified DATETIME(6) NULL,
  docs_url VARCHAR(255) NULL,
  terms_of_service_url VARCHAR(255) NULL,
  privacy_policy_url VARCHAR(255) NULL,
  tos_accepted_at DATETIME(6) NULL,
  api_key_id BIGINT NULL,
  tos_accepted_by_id INT NULL,
  user_profile_id BIGINT NOT NULL,
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (user_profile_id) REFERENCES account_userprofile (id) ON DELETE CASCADE,
  FOREIGN KEY (api_key_id) REFERENCES secret_secret (id) ON DELETE SET NULL,
  FOREIGN KEY (tos_accepted_by_id) REFERENCES auth_user (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE provider_providermodel (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  name VARCHAR(255) NOT NULL,
  description LONGTEXT NULL,
  is_default TINYINT(1) NOT NULL,
  is_active TINYINT(1) NOT NULL,
  is_deprecated TINYINT(1) NOT NULL,
  is_flagged TINYINT(1) NOT NULL,
  is_suspended TINYINT(1) NOT NULL,
  max_completion_tokens INT UNSIGNED NOT NULL,
  temperature DOUBLE NOT NULL,
  top_p DOUBLE NOT NULL,
  supports_text_input TINYINT(1) NOT NULL,
  supports_text_generation TINYINT(1) NOT NULL,
  supports_translation TINYINT(1) NOT NULL,
  supports_summarization TINYINT(1) NOT NULL,
  supports_streaming TINYINT(1) NOT NULL,
  supports_tools TINYINT(1) NOT NULL,
  supports_image_input TINYINT(1) NOT NULL,
  supports_audio_input TINYINT(1) NOT NULL,
  supports_embedding TINYINT(1) NOT NULL,
  supports_fine_tuning TINYINT(1) NOT NULL,
  supports_search TINYINT(1) NOT NULL,
  supports_code_interpreter TINYINT(1) NOT NULL,
  supports_image_generation TINYINT(1) NOT NULL,
  supports_audio_generation TINYINT(1) NOT NULL,
  provider_id BIGINT NOT NULL,
  UNIQUE KEY (provider_id, name),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (provider_id) REFERENCES provider_provider (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE provider_providerverification (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  verification_type VARCHAR(32) NOT NULL,
  is_successful TINYINT(1) NOT NULL,
  error_message LONGTEXT NULL,
  provider_id BIGINT NOT NULL,
  UNIQUE KEY (provider_id, verification_type),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (provider_id) REFERENCES provider_provider (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE provider_providermodelverification (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME(6) NULL, updated_at DATETIME(6) NULL,
  verification_type VARCHAR(32) NOT NULL,
  is_successful TINYINT(1) NOT NULL,
  error_message LONGTEXT NULL,
  provider_model_id BIGINT NOT NULL,
  UNIQUE KEY (provider_model_id, verification_type),
  KEY (created_at), KEY (updated_at),
  FOREIGN KEY (provider_model_id) REFERENCES provider_providermodel (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
