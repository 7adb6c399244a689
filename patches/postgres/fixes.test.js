
import { AsyncLocalStorage } from 'async_hooks'
import { spawnSync } from 'child_process'

/*
 * The fixes of animal-store-api's patches/postgres+3.4.9+NNN+*.patch, one or more tests each, as the
 * pull request of each part would add them (patches/README.md says which part each test belongs to).
 */

// A server that speaks just enough of the protocol to take a connection: it answers the startup with
// `parameters` and records what it is sent after that, answering nothing.
async function fakeServer(parameters = {}) {
  const received = []
  let connections = 0
  const server = net.createServer(socket => {
    let started = false
    connections++
    socket.on('error', () => { /* the client went away */ })
    socket.on('data', x => {
      if (started)
        return received.push(x)
      started = true
      const parameterStatus = Object.entries({
        in_hot_standby: 'off',
        default_transaction_read_only: 'off',
        ...parameters
      }).map(([k, v]) => {
        const body = Buffer.from(k + '\0' + v + '\0')
        const head = Buffer.alloc(5)
        head.write('S')
        head.writeUInt32BE(body.length + 4, 1)
        return Buffer.concat([head, body])
      })
      socket.write(Buffer.concat([
        Buffer.from([82, 0, 0, 0, 8, 0, 0, 0, 0]), // AuthenticationOk
        ...parameterStatus,
        Buffer.from([75, 0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 2]), // BackendKeyData
        Buffer.from([90, 0, 0, 0, 5, 73]) // ReadyForQuery, idle
      ]))
    })
  })
  await new Promise(r => server.listen(0, '127.0.0.1', r))
  return { port: server.address().port, received, connections: () => connections, close: () => server.close() }
}

// A server that takes a TCP connection and never answers on it.
async function silentServer() {
  const sockets = new Set()
  const server = net.createServer(socket => (sockets.add(socket), socket.on('error', () => { /* gone */ })))
  await new Promise(r => server.listen(0, '127.0.0.1', r))
  return { port: server.address().port, close: () => (sockets.forEach(x => x.destroy()), server.close()) }
}

// A proxy to the local server that lets `cut` reset the client's connections.
async function resettingProxy() {
  const sockets = new Set()
  const server = net.createServer(client => {
    const upstream = net.connect(5432, 'localhost')
    sockets.add(client)
    client.pipe(upstream)
    upstream.pipe(client)
    const end = () => (client.destroy(), upstream.destroy(), sockets.delete(client))
    client.on('error', end)
    upstream.on('error', end)
    client.on('close', end)
    upstream.on('close', end)
  })
  await new Promise(r => server.listen(0, '127.0.0.1', r))
  return {
    port: server.address().port,
    cut: () => sockets.forEach(x => x.resetAndDestroy()),
    close: () => server.close()
  }
}

const settled = x => x.then(() => 'resolved', e => e.code || e.message)

// 001
t('Cancel returns the cancel request\'s promise', async() => {
  const query = sql`select pg_sleep(1)`.execute()
  await delay(50)
  const cancelled = query.cancel()
  const error = await query.catch(x => x)
  await cancelled
  return ['true 57014', (cancelled instanceof Promise) + ' ' + error.code]
})

// 002
t('Debug is called with the query, in the async context of the code that ran it', async() => {
  const als = new AsyncLocalStorage()
  const seen = []
  const sql = postgres({
    ...options,
    max: 1,
    fetch_types: false,
    debug: (connection, string, parameters, types, query) => seen.push(als.getStore() + ':' + (query instanceof Promise))
  })
  // One connection: the second query waits for it and is sent from the first one's callbacks.
  await Promise.all([als.run('a', () => sql`select 1`.execute()), als.run('b', () => sql`select 2`.execute())])
  await sql.end()
  return ['a:true b:true', seen.join(' ')]
})

// 003
t('Reserve on a pool with no open connection and fetch_types: false', async() => {
  const sql = postgres({ ...options, fetch_types: false })
  const reserved = await sql.reserve()
  const [{ x }] = await reserved`select 1 as x`
  reserved.release()
  await sql.end()
  return [1, x]
})

// 004
t('A query that failed after some rows leaves no holes in the next one\'s rows', async() => {
  const sql = postgres({ ...options, max: 1 })
  const [failed, rows] = await Promise.all([
    settled(sql`select x, 1 / (x - 4) from generate_series(1, 5) as x`),
    sql`select x from generate_series(1, 5) as x`
  ])
  await sql.end()
  return ['22012 1,2,3,4,5 5', failed + ' ' + rows.map(r => r.x).join() + ' ' + rows.length]
})

// 005
t('An error a session sent as it closed does not fail the next session\'s first query', async() => {
  const sql = postgres({ ...options, max: 1, fetch_types: false })
  const first = await settled(sql`select pg_terminate_backend(pg_backend_pid())`)
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  return ['CONNECTION_CLOSED 1', first + ' ' + x]
})

// 006
t('Release of a reserved connection that closed does not give it back twice', async() => {
  let closed
  const sql = postgres({ ...options, max: 1, onclose: () => closed() })
  const gone = new Promise(r => closed = r)
  const reserved = await sql.reserve()
  await settled(reserved`select pg_terminate_backend(pg_backend_pid())`)
  await gone
  // The pool took the connection back when it closed, and gives it to the next reserve.
  const other = await sql.reserve()
  await other`begin`
  await other`set local app.holder = 'other'`
  reserved.release()
  // Another's now: a pool query waits for it rather than joining its transaction.
  const seen = sql`select current_setting('app.holder', true) as x`.execute()
  await other`commit`
  other.release()
  const [{ x }] = await seen
  await sql.end()
  return ['none', x || 'none']
})

// 006
t('A transaction whose connection closed leaves the pool of one usable', async() => {
  let closed
  const sql = postgres({ ...options, max: 1, onclose: () => closed() })
  const gone = new Promise(r => closed = r)
  const error = await settled(sql.begin(async sql => {
    await sql`select pg_terminate_backend(pg_backend_pid())`.catch(() => null)
    await gone
    await sql`select 1`
  }))
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  return ['CONNECTION_CLOSED 1', error + ' ' + x]
})

// 007
t('Statements waiting for a reserved connection fail when it closes', async() => {
  const sql = postgres({ ...options, max: 1 })
  const reserved = await sql.reserve()
  // Described first (a new statement with a parameter): the two behind it wait in the reserve's queue.
  const results = await Promise.all([
    reserved`select pg_terminate_backend(pg_backend_pid()) where ${1}::int = 1`,
    reserved`select ${2}::int as x`,
    reserved`select ${3}::int as x`
  ].map(settled))
  reserved.release()
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  return ['CONNECTION_CLOSED,CONNECTION_CLOSED,CONNECTION_CLOSED 1', results.join() + ' ' + x]
})

// 007
t('Statements waiting for a transaction\'s connection fail when it closes', async() => {
  const sql = postgres({ ...options, max: 1 })
  const results = []
  await settled(sql.begin(sql => [
    sql`select pg_terminate_backend(pg_backend_pid()) where ${1}::int = 1`,
    sql`select ${2}::int as x`,
    sql`select ${3}::int as x`
  ].map(x => settled(x).then(r => results.push(r)))))
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  return ['CONNECTION_CLOSED,CONNECTION_CLOSED,CONNECTION_CLOSED 1', results.join() + ' ' + x]
})

// 008
t('target_session_attrs read-write skips a hot standby', async() => {
  const standby = await fakeServer({ in_hot_standby: 'on', default_transaction_read_only: 'off' })
  const sql = postgres('postgres://localhost:' + standby.port + ',localhost:5432/' + options.db, {
    ...options,
    host: undefined,
    port: undefined,
    target_session_attrs: 'read-write'
  })
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  standby.close()
  return ['1 0', x + ' ' + standby.received.filter(b => b[0] !== 88).length] // nothing but a Terminate (X)
})

// 009
t('A write refused as read-only closes the connection for target_session_attrs primary', async() => {
  await sql`create table test_read_only (x int)`
  const db = postgres({ ...options, max: 1, target_session_attrs: 'primary' })
  const [{ a }] = await db`select pg_backend_pid() as a`
  await db`set default_transaction_read_only = on`
  const refused = await settled(db`insert into test_read_only values (1)`)
  const [{ b }] = await db`select pg_backend_pid() as b`
  await db`insert into test_read_only values (2)`
  await db.end()
  const [{ count }] = await sql`select count(*)::int as count from test_read_only`
  await sql`drop table test_read_only`
  return ['25006 true 1', refused + ' ' + (a !== b) + ' ' + count]
})

// 010
t('A query cancelled while it waits in the pipeline keeps its own answer', async() => {
  const sql = postgres({ ...options, max: 1 })
  await sql`select 1`
  const slow = sql`select pg_sleep(0.1)`.execute()
  const cancelled = sql`select pg_sleep(0.1), 'cancelled' as x`.execute()
  const after = sql`select 'after' as x`.execute()
  await delay(20)
  const cancelling = cancelled.cancel()
  const [, first, [{ x }]] = await Promise.all([slow, settled(cancelled), after])
  await cancelling
  await sql.end()
  return ['57014 after', first + ' ' + x]
})

// 011
t('sql.begin with max_pipeline: 0', async() => {
  const sql = postgres({ ...options, max_pipeline: 0 })
  const [{ x }] = await sql.begin(sql => sql`select 1 as x`)
  await sql.end()
  return [1, x]
})

// 012
t('max_pipeline: 0 does not hold back the statements of a reserved connection', async() => {
  const server = await fakeServer()
  const sql = postgres({ ...options, host: 'localhost', port: server.port, max_pipeline: 0, fetch_types: false })
  const reserved = await sql.reserve()
  reserved.unsafe('select 1').execute().catch(() => null)
  reserved.unsafe('select 2').execute().catch(() => null)
  // The fake server answers nothing: both statements are sent only if the second did not wait for the first.
  while (Buffer.concat(server.received).toString().indexOf('select 2') === -1)
    await delay(10)
  sql.end({ timeout: 0 })
  server.close()
  return [true, true]
})

// 013
t('A query refused before it is sent, behind one in flight, fails alone', async() => {
  const sql = postgres({ ...options, max: 1, prepare: false })
  await sql`select 1`
  // Sent in this order: the first is in flight when the refused one comes.
  const first = sql`select pg_sleep(0.1), 'first' as x`.execute()
  const refused = settled(sql`select 1 where 1 in ${ sql([...Array(65535).keys()]) }`)
  const after = sql`select 'after' as x`.execute()
  const results = await Promise.all([first.then(x => x[0].x, e => e.code), refused, after.then(x => x[0].x, e => e.code)])
  await sql.end()
  return ['first MAX_PARAMETERS_EXCEEDED after', results.join(' ')]
})

// 013, 014
t('A connection answers the next query after one refused for too many parameters', async() => {
  const sql = postgres({ ...options, max: 1 })
  const refused = await settled(sql`select 1 where 1 in ${ sql([...Array(65535).keys()]) }`)
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  return ['MAX_PARAMETERS_EXCEEDED 1', refused + ' ' + x]
})

// 014
t('A query sent while a retried statement is prepared again gets its own answer', async() => {
  let retry = null
  let sends = 0
  const sql = postgres({
    ...options,
    max: 1,
    debug: (connection, string) => {
      // The third send of the watched statement is its retry (the first prepared it, the second was refused): a query is sent as it leaves.
      string === 'select $1::int as a' && ++sends === 3 && process.nextTick(() => {
        retry = sql`select 'behind' as b`.execute()
      })
    }
  })
  await sql`select ${1}::int as a`
  await sql.unsafe('deallocate all', [], { prepare: false })
  const [{ a }] = await sql`select ${2}::int as a`
  const [{ b }] = await retry
  await sql.end()
  return ['2 behind 3', a + ' ' + b + ' ' + sends]
})

// 014
t('A statement retried while a query described first waits behind it gets its own answer', async() => {
  const sql = postgres({ ...options, max: 1 })
  await sql`select ${1}::int as a`
  await sql.unsafe('deallocate all', [], { prepare: false })
  const [[{ a }], [{ b }]] = await Promise.all([
    sql`select ${2}::int as a`,
    sql`select ${3}::int * 2 as b`
  ])
  await sql.end()
  return ['2 6', a + ' ' + b]
})

// 015
t('A retried statement is bound with the values the caller gave', async() => {
  const sql = postgres({ ...options, max: 1 })
  const flags = () => sql`select ${ true }::bool as on, ${ false }::bool as off, ${ 't' }::text as text`
  await flags()
  await sql.unsafe('deallocate all', [], { prepare: false })
  const [{ on, off, text }] = await flags()
  await sql.end()
  return ['true false t', on + ' ' + off + ' ' + text]
})

// 016
t('Queue gives what was pushed, in order, through shifts and removes', async() => {
  const { default: Queue } = await import('../src/queue.js')
  const queue = Queue()
      , model = []
  let same = true
  let seed = 7
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
  for (let i = 0; i < 20000; i++) {
    const r = random()
    if (r < 0.5) {
      queue.push(i)
      model.push(i)
    } else if (r < 0.8) {
      model.length && (same = same && queue.shift() === model.shift())
    } else {
      const x = model[Math.floor(random() * model.length)]
      x !== undefined && (same = same && queue.remove(x) === x && model.splice(model.indexOf(x), 1).length === 1)
    }
    same = same && queue.length === model.length
  }
  return [true, same]
})

// 017
t('With several hosts, a connection\'s first query fails when its socket is reset', async() => {
  const proxy = await resettingProxy()
  const db = postgres('postgres://localhost:' + proxy.port + ',localhost:1/' + options.db, {
    ...options,
    host: undefined,
    port: undefined,
    max: 1
  })
  const first = db`select pg_sleep(1)`.execute()
  while (!(await sql`select 1 from pg_stat_activity where query = 'select pg_sleep(1)'`.catch(() => []).then(x => x.length)))
    await delay(10)
  proxy.cut()
  const error = await settled(first)
  const [{ x }] = await db`select 1 as x`
  await db.end()
  proxy.close()
  return ['ECONNRESET 1', error + ' ' + x]
})

// 018
t('A query cancelled while its connection opens leaves the connection usable', async() => {
  const sql = postgres({ ...options, max: 1, fetch_types: false })
  const query = sql`select 1 as x`.execute()
  await new Promise(r => setImmediate(r))
  await query.cancel()
  const error = await settled(query)
  const [{ x }] = await sql`select 2 as x`
  await sql.end()
  return ['57014 2', error + ' ' + x]
})

// 018
t('A statement cancelled while it waits for its reserved connection does not hold back the next', async() => {
  const sql = postgres({ ...options, max: 1 })
  const reserved = await sql.reserve()
  const first = reserved`select pg_sleep(0.1), ${1}::int as x`.execute() // described first: the rest wait
  const cancelled = reserved`select ${2}::int as x`.execute()
  const after = reserved`select ${3}::int as x`.execute()
  await cancelled.cancel()
  const results = [await settled(cancelled), (await first)[0].x, (await after)[0].x]
  reserved.release()
  await sql.end()
  return ['57014,1,3', results.join()]
})

// 019
t('A statement sent on a reserved connection as its socket\'s error is handled fails when it closes', async() => {
  const proxy = await resettingProxy()
  const db = postgres({ ...options, host: 'localhost', port: proxy.port, max: 1 })
  const reserved = await db.reserve()
  await reserved`select 1`
  const sleeping = reserved`select pg_sleep(1)`.execute()
  let rollback
  const failed = sleeping.catch(e => (rollback = settled(reserved`rollback`), e.code))
  while (!(await sql`select 1 from pg_stat_activity where query = 'select pg_sleep(1)'`.catch(() => []).then(x => x.length)))
    await delay(10)
  proxy.cut()
  const error = await failed
  const result = await rollback
  reserved.release()
  const [{ x }] = await db`select 1 as x`
  await db.end()
  proxy.close()
  return ['ECONNRESET CONNECTION_CLOSED 1', error + ' ' + result + ' ' + x]
})

// 020
t('Queries that never run (fragments) are collected young', async() => {
  // A child process makes 400,000 fragments, none of them ever sent, and reports what its young
  // collections moved to the old generation: a fragment that lives no longer than its line should not be.
  const child = spawnSync(process.execPath, ['--trace-gc-nvp', '--input-type=module', '-e', `
    const { default: postgres } = await import(${JSON.stringify(String(rel('../src/index.js')))})
    const sql = postgres({ host: '127.0.0.1', port: 1, max: 1 })
    let made = 0
    await new Promise(resolve => {
      const batch = () => {
        for (let i = 0; i < 1000; i++, made++) sql\`id = \${made} and name = \${'name ' + made}\`
        made < 400000 ? setImmediate(batch) : resolve()
      }
      batch()
    })
  `], { encoding: 'utf8' })
  const scavenges = child.stdout.split('\n').filter(x => x.includes(' gc=s '))
  const sum = field => scavenges.reduce((acc, x) => acc + Number((x.match(new RegExp(' ' + field + '=(\\d+)')) || [0, 0])[1]), 0)
  const share = sum('promoted') / sum('allocated')
  return [true, child.status === 0 && scavenges.length > 0 && share < 0.1]
})

// 021
t('Queries made in the same tick share one connection', async() => {
  const sql = postgres({ ...options, max: 4 })
  // Four connections, open and idle: one query each while all four wait.
  const opened = await Promise.all([...Array(4)].map(() => sql`select pg_backend_pid() as pid, pg_sleep(0.05)`))
  const pids = await Promise.all([...Array(4)].map(() => sql`select pg_backend_pid() as pid`))
  await sql.end()
  const distinct = xs => new Set(xs.map(([x]) => x.pid)).size
  return ['4 1', distinct(opened) + ' ' + distinct(pids)]
})

// 021
t('Queries made in the same tick leave a connection once it holds max_pipeline', async() => {
  const sql = postgres({ ...options, max: 4, max_pipeline: 2 })
  await Promise.all([...Array(4)].map(() => sql`select pg_sleep(0.05)`))
  // Three to a connection: the one it answers, and two in its pipeline.
  const pids = await Promise.all([...Array(6)].map(() => sql`select pg_backend_pid() as pid`))
  await sql.end()
  return ['2', String(new Set(pids.map(([x]) => x.pid)).size)]
})

// 022
t('An attempt that finds no host with the target_session_attrs fails its query and backs off', { timeout: 5 }, async() => {
  const standbys = [await fakeServer({ in_hot_standby: 'on' }), await fakeServer({ in_hot_standby: 'on' })]
  const sql = postgres('postgres://localhost:' + standbys[0].port + ',localhost:' + standbys[1].port + '/' + options.db, {
    ...options,
    host: undefined,
    port: undefined,
    max: 1,
    backoff: 0.5,
    target_session_attrs: 'primary'
  })
  const first = await settled(sql`select 1`)
  const connections = standbys.map(x => x.connections()).join(',')
  const start = performance.now()
  const second = await settled(sql`select 1`)
  const waited = performance.now() - start
  await sql.end()
  standbys.forEach(x => x.close())
  return ['TARGET_SESSION_ATTRS 1,1 TARGET_SESSION_ATTRS true', first + ' ' + connections + ' ' + second + ' ' + (waited >= 400)]
})

// 022
t('One host without the target_session_attrs fails the query rather than being asked again and again', { timeout: 5 }, async() => {
  const standby = await fakeServer({ in_hot_standby: 'on' })
  const sql = postgres({ ...options, port: standby.port, max: 1, target_session_attrs: 'read-write' })
  const error = await settled(sql`select 1`)
  await delay(100)
  await sql.end()
  standby.close()
  return ['TARGET_SESSION_ATTRS 1', error + ' ' + standby.connections()]
})

// 022
t('A host that does not answer within connect_timeout is left for the next', { timeout: 5 }, async() => {
  const silent = await silentServer()
  const sql = postgres('postgres://localhost:' + silent.port + ',localhost:5432/' + options.db, {
    ...options,
    host: undefined,
    port: undefined,
    max: 1,
    connect_timeout: 0.5
  })
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  silent.close()
  return [1, x]
})

// 022
t('prefer-standby takes a primary when no host of the attempt is a standby', { timeout: 5 }, async() => {
  const sql = postgres('postgres://localhost:5432,localhost:5432/' + options.db, {
    ...options,
    host: undefined,
    port: undefined,
    max: 1,
    target_session_attrs: 'prefer-standby'
  })
  const [{ x }] = await sql`select 1 as x`
  await sql.end()
  return [1, x]
})

// 023
t('A row\'s values read as their text, ASCII beside UTF-8 and NULL', async() => {
  const expected = ['plain', 'æøå – 🐈', null, '', 'tail é', 42, ['a', 'ü'], 'ASCII after é']
  const [x] = await sql`
    select 'plain' as a, 'æøå – 🐈' as b, null::text as c, '' as d, ${'tail é'}::text as e, 42::int4 as f,
           array['a', 'ü']::text[] as g, 'ASCII after é' as h
  `
  const [y] = await sql`select 'é' as a, 'first' as b`
  const [z] = await sql`select 'last' as a, 'é' as b`
  return [
    JSON.stringify([...expected, 'é', 'first', 'last', 'é']),
    JSON.stringify([...Object.values(x), ...Object.values(y), ...Object.values(z)])
  ]
})

// 023
t('A row longer than rowTextMax reads as its text, value by value', async() => {
  const long = 'a'.repeat(1500)
  const [x] = await sql`select ${long}::text as a, 'é' || ${long}::text as b, 7::int4 as c, 'end' as d`
  const [y] = await sql`select ${'ü'.repeat(600)}::text as a, 'plain' as b`
  return [
    [long, 'é' + long, 7, 'end', 'ü'.repeat(600), 'plain'].join(','),
    [...Object.values(x), ...Object.values(y)].join(',')
  ]
})

// 024
t('Rows whose messages straddle the socket\'s reads arrive whole', async() => {
  const rows = await sql`
    select i, repeat(chr(97 + i % 26), i % 3000) || case when i % 7 = 0 then 'é' else '' end as text
    from generate_series(1, 3000) i
  `
  const wrong = rows.filter(({ i, text }) => text !== String.fromCharCode(97 + i % 26).repeat(i % 3000) + (i % 7 === 0 ? 'é' : ''))
  return ['3000 0', rows.length + ' ' + wrong.length]
})

// 024
t('An error after rows in the same read fails the query and leaves the connection to the next', async() => {
  const sql = postgres({ ...options, max: 1 })
  const failed = await sql`select 10 / (3 - i) as x from generate_series(1, 5) i`.catch(e => e.code)
  const [{ x }] = await sql`select 'next' as x`
  await sql.end()
  return ['22012 next', failed + ' ' + x]
})
