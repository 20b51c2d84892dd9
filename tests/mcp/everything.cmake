# Catalog actions of kind mcp end to end against the official MCP reference server (npm
# @modelcontextprotocol/server-everything, pinned in tests/e2e/mcp/package-lock.json): the real
# dispatchd with fake_model, fake_graph and fake_gmail, once with the server as its child over
# stdio and once over Streamable HTTP (tests/e2e/mcp_everything_test.py says what each shows).
# Label `mcp`; skipped (77) only when node or npm is missing. The first run installs the
# package from the npm registry into the build tree (`npm ci`, offline afterwards), once, in
# the fixture test both transports require.
set(mcp_everything_script ${CMAKE_CURRENT_SOURCE_DIR}/e2e/mcp_everything_test.py)
add_test(NAME "e2e: mcp everything install" COMMAND python3 ${mcp_everything_script} ${PROJECT_BINARY_DIR}
                                                    ${PROJECT_SOURCE_DIR} install)
set_tests_properties("e2e: mcp everything install" PROPERTIES FIXTURES_SETUP mcp_everything LABELS mcp TIMEOUT 600
                                                              SKIP_RETURN_CODE 77)
foreach(transport stdio http)
  add_test(NAME "e2e: mcp everything over ${transport}"
           COMMAND python3 ${mcp_everything_script} ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} --transport
                   ${transport})
  set_tests_properties("e2e: mcp everything over ${transport}" PROPERTIES FIXTURES_REQUIRED mcp_everything LABELS mcp
                                                                          TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()
