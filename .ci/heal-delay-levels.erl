%% Run: rabbitmqctl eval "<this file's text>" (docs/delayed-delivery.md: "RabbitMQ 3.10's delay levels"), on any node
%% of a cluster: it acts on every running node. No dollar signs or backticks: Debian's rabbitmqctl wrapper passes
%% its arguments through sh -c as root. Nothing is dropped; prints how many repairs it made (0: nothing stalled).
%% It heals the two stalls of RabbitMQ 3.10's at-least-once dead-lettering out of the delay levels (celery_delayed_*):
%% 1. A level's dead-letter worker holding a message whose every target has settled but which it never acked, for
%%    more than 10 s (after a target queue was deleted mid-delivery): that worker is restarted, and routes them again.
%% 2. A node whose dead-letter supervisor gave up (two worker exits within 5 s, as when the levels' leaders move
%%    after a node stops): it is not restarted, and no level led there moves again. The supervisor is started
%%    again, and every level without a live dead-letter worker is told to start one on its leader.
Nodes = rabbit_nodes:all_running(),
Now = erlang:system_time(millisecond),
IsStuck = fun(P) -> is_tuple(P) andalso tuple_size(P) >= 9 andalso element(1, P) =:= pending
            andalso element(5, P) =:= [] andalso is_integer(element(9, P)) andalso Now - element(9, P) > 10000 end,
IsLevel = fun(S) -> case catch element(4, element(2, S)) of <<"celery_delayed_", _/binary>> -> true; _ -> false end end,
Stalled = fun(S) -> case catch maps:values(element(8, S)) of Ps when is_list(Ps) -> lists:any(IsStuck, Ps); _ -> false end end,
Workers = [W || N <- Nodes, Cs <- [rpc:call(N, supervisor, which_children, [rabbit_fifo_dlx_sup], 15000)],
                is_list(Cs), {_, W, _, _} <- Cs, is_pid(W)],
States = [{W, S} || W <- Workers, S <- [catch sys:get_state(W, 5000)], is_tuple(S), tuple_size(S) >= 8],
Restart = [W || {W, S} <- States, IsLevel(S) andalso Stalled(S)],
[exit(W, kill) || W <- Restart],
Revive = fun() -> case whereis(rabbit_fifo_dlx_sup) of
                    undefined -> case supervisor:restart_child(rabbit_sup, rabbit_fifo_dlx_sup) of {ok, _} -> 1; _ -> 0 end;
                    _ -> 0 end end,
Revived = lists:sum([R || N <- Nodes, R <- [rpc:call(N, erlang, apply, [Revive, []], 15000)], is_integer(R)]),
Served = [element(2, S) || {_, S} <- States, IsLevel(S)],
IsLevelQ = fun(Q) -> case amqqueue:get_name(Q) of {resource, _, queue, <<"celery_delayed_", _/binary>>} -> true; _ -> false end end,
AtLeastOnce = fun(Q) -> lists:keyfind(<<"x-dead-letter-strategy">>, 1, amqqueue:get_arguments(Q))
                         =:= {<<"x-dead-letter-strategy">>, longstr, <<"at-least-once">>} end,
Unserved = [Q || Q <- rabbit_amqqueue:list(), amqqueue:get_type(Q) =:= rabbit_quorum_queue, IsLevelQ(Q),
                 AtLeastOnce(Q), not lists:member(amqqueue:get_name(Q), Served)],
[ra:cast_aux_command(amqqueue:get_pid(Q), {dlx, setup}) || Q <- Unserved],
length(Restart) + Revived + length(Unserved).
