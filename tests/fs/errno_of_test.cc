// The errno a FUSE caller gets for an engine error: the system call's own errno when a Status
// carries one (through with_context, Result and FLASHDIR_TRY on its way up), else the code's.
#include <catch2/catch.hpp>
#include <cerrno>

#include "fs/sys_result.h"

using flashdir::Result;
using flashdir::Status;
using flashdir::StatusCode;
using flashdir::fs::errno_of;

namespace {

Result<int> passes_on(const Status& status) {
  FLASHDIR_TRY(status);
  return 1;
}

}  // namespace

TEST_CASE("a Status keeps the errno of the system call behind it on its way up") {
  const Status quota = Status::no_space("writing f: Disk quota exceeded").with_errno(EDQUOT);
  CHECK(quota.code() == StatusCode::no_space);
  CHECK(quota.sys_errno() == EDQUOT);
  CHECK(quota.to_string() == "no space: writing f: Disk quota exceeded");

  const Status wrapped = quota.with_context("writing back file 7");
  CHECK(wrapped.code() == StatusCode::no_space);
  CHECK(wrapped.sys_errno() == EDQUOT);
  CHECK(wrapped.message() == "writing back file 7: writing f: Disk quota exceeded");

  const Result<int> result = passes_on(wrapped);
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().sys_errno() == EDQUOT);
  CHECK(result.status().message() == wrapped.message());

  CHECK(Status::io_error("checksum").sys_errno() == 0);
  CHECK(Status::ok().sys_errno() == 0);
}

TEST_CASE("errno_of answers with the carried errno, else with the code's nearest errno") {
  CHECK(errno_of(Status::ok()) == 0);
  CHECK(errno_of(Status::no_space("x").with_errno(EDQUOT)) == EDQUOT);
  CHECK(errno_of(Status::io_error("x").with_errno(EFBIG)) == EFBIG);
  CHECK(errno_of(Status::io_error("x").with_errno(EROFS).with_context("y")) == EROFS);
  CHECK(errno_of(Status::invalid_argument("x").with_errno(EOPNOTSUPP)) == EOPNOTSUPP);

  CHECK(errno_of(Status::no_space("x")) == ENOSPC);
  CHECK(errno_of(Status::invalid_argument("x")) == EINVAL);
  CHECK(errno_of(Status::not_found("x")) == ENOENT);
  CHECK(errno_of(Status::already_exists("x")) == EEXIST);
  CHECK(errno_of(Status::io_error("x")) == EIO);
  CHECK(errno_of(Status::corruption("x")) == EIO);
  CHECK(errno_of(Status::power_lost("x")) == EIO);
}
