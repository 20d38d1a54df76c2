// The names the docs' snippets use without defining them (the app's own types, services and
// helpers), declared once for every file in this directory: a script file, so its declarations are global.
interface Order { id: number; total: number }
interface Job { id: number }
declare function save(v: Order): Promise<void>
declare function bulk(b: readonly unknown[]): Promise<void>
declare function charge(m: { value: Order }): Promise<void>
declare function handle(m: { value: Order }): Promise<void>
declare function bill(v: Order): Promise<void>
declare function run(v: Job): Promise<void>
declare const order: Order
declare const orders: Order[]
declare const a: Order
declare const b: Order
declare const orderSchema: (v: unknown) => Order
declare const db: { save(v: Order): Promise<void> }
declare const warehouse: { insertMany(v: Order[]): Promise<void> }
declare const billing: { charge(v: Order): Promise<void> }
declare const log: { warn(o: object, s: string): void }
declare const metrics: { processed: { inc(): void } }
declare function enrich(m: { value: Order }): Promise<void>
declare function store(b: readonly unknown[]): Promise<void>
declare function deliver(m: { value: Order }): Promise<void>
declare function alert(e: unknown): void
declare const twain: import('twainmq').Twain
declare const consumer: import('twainmq').Consumer<Order>
declare const proc: import('twainmq').Processor<Order>
declare const pg: { query(sql: string, params: unknown[]): Promise<unknown> }
interface Customer { name: string; tier: 'gold' | 'basic' }
declare function pino(): import('twainmq').Logger
declare function app(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void
interface Click { user: string; page: string }
interface OrderPlaced { id: number; customerId: string; total: number }
declare const placedOrders: import('twainmq').Consumer<OrderPlaced, string>
declare const customers: import('twainmq').Table<Customer, string>
