-- Runs once, when the PostgreSQL volume is first created: the application's own database.
-- Its tables are created by the worker's migrations at start.
CREATE DATABASE target_health OWNER temporal;
