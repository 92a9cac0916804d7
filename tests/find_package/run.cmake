# SPDX-License-Identifier: Apache-2.0
# Install the build into a scratch prefix, then configure, build and run a consumer against it.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
set(flags "")
if(SANITIZE)
  set(flags "-fsanitize=address,undefined")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -G ${GENERATOR}
                        -DCMAKE_C_COMPILER=${CC} -DCMAKE_PREFIX_PATH=${WORK}/prefix
                        "-DCMAKE_C_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${flags}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "building the consumer failed:\n${out}")
endif()
foreach(exe consumer consumer_static)
  execute_process(COMMAND ${WORK}/build/${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  # the seed: 128 nodes x 8 = 1024 accelerators, gather_traffic_ratio = dp_degree / 2 = 64
  if(rc OR NOT out MATCHES "^accelerators 1024 gather_traffic_ratio 64 version ")
    message(FATAL_ERROR "${exe}: exit ${rc}, printed '${out}' ${err}")
  endif()
  message(STATUS "${exe}: ${out}")
endforeach()
