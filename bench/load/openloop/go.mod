module users-service/bench/openloop

go 1.19
