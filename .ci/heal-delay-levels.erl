%% Run: rabbitmqctl eval "<this file's text>" (docs/delayed-delivery.md: "A deleted queue and RabbitMQ 3.10's delay levels"). No dollar signs or backticks:
%% Debian's rabbitmqctl wrapper passes its arguments through sh -c as root.
%% Restarts the at-least-once dead-letter worker of each delay level (celery_delayed_*) that holds a message
%% whose every target has settled but which it never acked for more than 10 s: RabbitMQ 3.10's stall after a
%% target queue was deleted mid-delivery. The restarted worker routes those again (their queue is gone: to the
%% sink alone, which settles) and the level flows again; nothing is dropped. Prints how many it restarted.
Now = erlang:system_time(millisecond),
IsStuck = fun(P) -> is_tuple(P) andalso tuple_size(P) >= 9 andalso element(1, P) =:= pending
            andalso element(5, P) =:= [] andalso is_integer(element(9, P)) andalso Now - element(9, P) > 10000 end,
IsLevel = fun(S) -> case catch element(4, element(2, S)) of <<"celery_delayed_", _/binary>> -> true; _ -> false end end,
Stalled = fun(S) -> case catch maps:values(element(8, S)) of Ps when is_list(Ps) -> lists:any(IsStuck, Ps); _ -> false end end,
Workers = [W || {_, W, _, _} <- supervisor:which_children(rabbit_fifo_dlx_sup), is_pid(W)],
Restart = [W || W <- Workers, case catch sys:get_state(W, 5000) of S when is_tuple(S), tuple_size(S) >= 8 -> IsLevel(S) andalso Stalled(S); _ -> false end],
[exit(W, kill) || W <- Restart],
length(Restart).
