// RocksDB's own log (its warnings and errors), sent to flashdir's log instead of a LOG file in
// the catalog directory. A LOG file sits on the cache disk: when that disk fills, RocksDB's
// logging to it fails and (Debian builds RocksDB with assertions) aborts the process, and a
// message written there cannot tell anyone why. spdlog's sinks (stderr, the daemon's log,
// syslog) reach the admin.
#pragma once

#include <memory>
#include <string>

#include <rocksdb/env.h>

namespace flashdir::catalog {

// A logger for rocksdb::Options::info_log at warning level and above; its lines name `database`
// ("catalog", "metadata cache").
std::shared_ptr<rocksdb::Logger> rocksdb_log(std::string database);

}  // namespace flashdir::catalog
