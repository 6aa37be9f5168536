# Installs the build in BUILD_DIR into a fresh prefix under WORK_DIR, builds
# the consumer project against it with find_package(trainflops), runs it, and
# checks its count against the tool's.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE status OUTPUT_QUIET)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${status}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/consumer
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configuring the consumer failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer RESULT_VARIABLE status OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "building the consumer failed:\n${out}")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer/consumer RESULT_VARIABLE status OUTPUT_VARIABLE library_count)
execute_process(COMMAND ${WORK_DIR}/prefix/bin/trainflops count --preset llama-3.1-8b --global-batch-size 1
                        --seq-length 4096 --mode model --format json
                OUTPUT_VARIABLE tool_json)
string(JSON tool_count GET "${tool_json}" total exact)
string(STRIP "${library_count}" library_count)
if(NOT status EQUAL 0 OR NOT library_count STREQUAL tool_count)
  message(FATAL_ERROR "the consumer printed '${library_count}' (status ${status}); the installed tool counts ${tool_count}")
endif()
message(STATUS "consumer built against the install; both count ${library_count}")
