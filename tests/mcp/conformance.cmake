# The MCP client against the official conformance suite (npm @modelcontextprotocol/conformance,
# pinned in tests/mcp/conformance/package-lock.json): the suite's runner starts a scenario's
# server and runs mcp_conformance_client (dispatchd's HttpClient over CurlTransport) against
# it. Label `mcp`; skipped (77) only when node or npm is missing. The first run installs the
# package from the npm registry into the build tree (`npm ci`, offline afterwards), once, in
# the fixture test every scenario requires.
add_executable(mcp_conformance_client mcp/conformance_client.cpp)
target_link_libraries(mcp_conformance_client PRIVATE dispatchd_mcp dispatchd_net dispatchd_asio dispatchd_warnings
                                                     dispatchd_settings)
target_include_directories(mcp_conformance_client PRIVATE ${PROJECT_SOURCE_DIR})

set(mcp_conformance_script ${CMAKE_CURRENT_SOURCE_DIR}/mcp/conformance/run_scenario.py)
add_test(NAME "mcp: conformance install" COMMAND python3 ${mcp_conformance_script} install ${PROJECT_BINARY_DIR}
                                                 ${PROJECT_SOURCE_DIR})
set_tests_properties("mcp: conformance install" PROPERTIES FIXTURES_SETUP mcp_conformance LABELS mcp TIMEOUT 600
                                                           SKIP_RETURN_CODE 77)
# The scenarios whose servers speak Streamable HTTP without OAuth: the handshake, a tool
# call, and a stream the server ends before the answer (resumed with Last-Event-ID after
# its `retry`, within the window the scenario allows).
foreach(scenario initialize tools_call sse-retry)
  add_test(NAME "mcp: conformance ${scenario}"
           COMMAND python3 ${mcp_conformance_script} run ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:mcp_conformance_client> ${scenario})
  set_tests_properties("mcp: conformance ${scenario}" PROPERTIES FIXTURES_REQUIRED mcp_conformance LABELS mcp
                                                                 TIMEOUT 120 SKIP_RETURN_CODE 77)
endforeach()
