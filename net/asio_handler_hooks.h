#pragma once
// Asio's custom handler tracking (BOOST_ASIO_CUSTOM_HANDLER_TRACKING names this header; Asio
// includes it from boost/asio/detail/handler_tracking.hpp). Only the completion and
// invocation hooks do anything: they name and time each handler for common/handler_timing.h
// (the name is the operation's static type: typeid costs nothing at run time). The rest are
// empty, and
// BOOST_ASIO_INHERIT_TRACKED_HANDLER adds no base class, so Asio's objects keep their
// layout: a translation unit compiled without the define differs only in these two calls.
//
// Never include it directly: include common/handler_timing.h for the types.

#include <typeinfo>

#include "common/handler_timing.h"

#define BOOST_ASIO_INHERIT_TRACKED_HANDLER
#define BOOST_ASIO_ALSO_INHERIT_TRACKED_HANDLER
#define BOOST_ASIO_HANDLER_TRACKING_INIT (void)0
#define BOOST_ASIO_HANDLER_LOCATION(args) (void)0
#define BOOST_ASIO_HANDLER_CREATION(args) (void)0
// Asio passes `((*op))`: typeid (*op).name().
#define BOOST_ASIO_HANDLER_COMPLETION(args) ::dispatchd::common::handler_timing::completing(typeid args.name())
#define BOOST_ASIO_HANDLER_INVOCATION_BEGIN(args) ::dispatchd::common::handler_timing::begin()
#define BOOST_ASIO_HANDLER_INVOCATION_END ::dispatchd::common::handler_timing::end()
#define BOOST_ASIO_HANDLER_OPERATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_REGISTRATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_DEREGISTRATION(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_READ_EVENT 0
#define BOOST_ASIO_HANDLER_REACTOR_WRITE_EVENT 0
#define BOOST_ASIO_HANDLER_REACTOR_ERROR_EVENT 0
#define BOOST_ASIO_HANDLER_REACTOR_EVENTS(args) (void)0
#define BOOST_ASIO_HANDLER_REACTOR_OPERATION(args) (void)0
